/**
 * The Durable Object's command and process calls: RPC arguments validated with the protocol schemas,
 * then forwarded to the container's /api/execute and /api/process routes. Streams come back as the
 * container's SSE bytes; the Durable Object only wraps them to keep the container awake.
 */
import type {
  CleanupResponse,
  ExecResponse,
  ExecResult,
  GetProcessLogsResponse,
  GetProcessResponse,
  KillAllResponse,
  KillResponse,
  ListProcessesResponse,
  ProcessInfo,
  StartProcessResponse,
  StdinResponse,
} from "../../protocol/process.ts";
import { EXEC_ROUTES, execRequestSchema, parseSignal, PROCESS_ROUTES, startProcessRequestSchema, stdinRequestSchema } from "../../protocol/process.ts";
import { InvalidRequestError, ProcessNotFoundError } from "../rpc/errors.ts";
import type {
  ExecRequestOptions,
  KillAllRequest,
  KillResult,
  ListRequest,
  ProcessLogs,
  ProcessRecord,
  StartRequestOptions,
  StdinResult,
  StreamResumeRequest,
} from "../rpc/processes.ts";
import type { ContainerApi } from "./container-api.ts";
import type { Generation } from "./generation.ts";
import { parseRequest, processId, query, resumeQuery } from "./request.ts";

export async function exec(api: ContainerApi, command: string, options: ExecRequestOptions): Promise<ExecResult> {
  const body = parseRequest(execRequestSchema, { ...options, command }, "exec request");
  return api.json<ExecResponse>("POST", EXEC_ROUTES.execute, body);
}

export async function execStream(api: ContainerApi, command: string, options: ExecRequestOptions): Promise<ReadableStream<Uint8Array>> {
  const body = parseRequest(execRequestSchema, { ...options, command }, "exec request");
  return api.stream("POST", EXEC_ROUTES.stream, body);
}

export async function startProcess(api: ContainerApi, generation: Generation, command: string, options: StartRequestOptions): Promise<ProcessRecord> {
  const body = parseRequest(startProcessRequestSchema, { ...options, command }, "start request");
  const { process } = await api.json<StartProcessResponse>("POST", PROCESS_ROUTES.start, body);
  return record(process, generation);
}

export async function listProcesses(api: ContainerApi, generation: Generation, options: ListRequest): Promise<ProcessRecord[]> {
  const { processes } = await api.json<ListProcessesResponse>("GET", `${PROCESS_ROUTES.list}${query({ sessionId: options.sessionId })}`);
  return processes.map((process) => record(process, generation));
}

/** A process, or null when the container does not know the id (it answers 404). */
export async function getProcess(api: ContainerApi, generation: Generation, id: string): Promise<ProcessRecord | null> {
  try {
    const { process } = await api.json<GetProcessResponse>("GET", PROCESS_ROUTES.one(processId(id)));
    return record(process, generation);
  } catch (error) {
    if (error instanceof ProcessNotFoundError) return null;
    throw error;
  }
}

export async function killProcess(api: ContainerApi, id: string, signal: string | number | undefined): Promise<KillResult> {
  const name = signalName(signal);
  return api.record<KillResponse>("DELETE", PROCESS_ROUTES.one(processId(id)) + query({ signal: name }));
}

export async function killAllProcesses(api: ContainerApi, options: KillAllRequest): Promise<number> {
  const signal = options.signal === undefined ? undefined : signalName(options.signal);
  const { killed } = await api.json<KillAllResponse>("DELETE", `${PROCESS_ROUTES.killAll}${query({ sessionId: options.sessionId, signal })}`);
  return killed;
}

/** The exec events of an exec after `since`: the container's own exec stream, resumed. */
export async function resumeExecStream(api: ContainerApi, id: string, options: StreamResumeRequest): Promise<ReadableStream<Uint8Array>> {
  return api.stream("GET", EXEC_ROUTES.resume(processId(id)) + resumeQuery(options));
}

export async function streamProcessLogs(api: ContainerApi, id: string, options: StreamResumeRequest): Promise<ReadableStream<Uint8Array>> {
  return api.stream("GET", PROCESS_ROUTES.stream(processId(id)) + resumeQuery(options));
}

export async function getProcessLogs(api: ContainerApi, id: string): Promise<ProcessLogs> {
  return api.record<GetProcessLogsResponse>("GET", PROCESS_ROUTES.logs(processId(id)));
}

export async function cleanupCompletedProcesses(api: ContainerApi): Promise<number> {
  return (await api.json<CleanupResponse>("POST", PROCESS_ROUTES.cleanup)).cleaned;
}

export async function writeStdin(
  api: ContainerApi,
  id: string,
  data: string,
  options: { encoding?: "utf8" | "base64"; close?: boolean },
): Promise<StdinResult> {
  const request = { data, ...(options.encoding ? { encoding: options.encoding } : {}), ...(options.close ? { close: true } : {}) };
  const body = parseRequest(stdinRequestSchema, request, "stdin request");
  return api.record<StdinResponse>("POST", PROCESS_ROUTES.stdin(processId(id)), body);
}

export async function closeStdin(api: ContainerApi, id: string): Promise<StdinResult> {
  return api.record<StdinResponse>("POST", PROCESS_ROUTES.stdin(processId(id)), { close: true });
}

function signalName(signal: string | number | undefined): string {
  const name = parseSignal(signal);
  if (!name) throw new InvalidRequestError(`Unknown signal ${String(signal)}`, "INVALID_SIGNAL");
  return name;
}

function record(process: ProcessInfo, generation: Generation): ProcessRecord {
  return { ...process, generation: generation.instanceId };
}
