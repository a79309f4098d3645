/**
 * The Durable Object's code interpreter calls: RPC arguments validated with the protocol schemas,
 * then forwarded to the container's /api/code routes. Run streams come back as the container's SSE
 * bytes. Contexts live in the container: one restarted is empty, and its old ids answer
 * CODE_CONTEXT_NOT_FOUND (ids are never reused).
 */
import {
  CODE_ROUTES,
  codeIdSchema,
  createCodeContextRequestSchema,
  runCodeRequestSchema,
  type CodeContext,
  type CodeContextResponse,
  type DeleteCodeContextResponse,
  type Execution,
  type InterruptCodeResponse,
  type ListCodeContextsResponse,
} from "../../protocol/code.ts";
import type { CodeContextOptions, DeleteCodeContextResult, InterruptCodeResult, RunCodeRequestOptions } from "../rpc/code.ts";
import type { StreamResumeRequest } from "../rpc/processes.ts";
import type { ContainerApi } from "./container-api.ts";
import { parseRequest, resumeQuery } from "./request.ts";

export async function createCodeContext(api: ContainerApi, options: CodeContextOptions = {}): Promise<CodeContext> {
  const body = parseRequest(createCodeContextRequestSchema, options, "code context request");
  return (await api.json<CodeContextResponse>("POST", CODE_ROUTES.contexts, body)).context;
}

export async function listCodeContexts(api: ContainerApi): Promise<CodeContext[]> {
  return (await api.json<ListCodeContextsResponse>("GET", CODE_ROUTES.contexts)).contexts;
}

export async function getCodeContext(api: ContainerApi, id: string): Promise<CodeContext> {
  return (await api.json<CodeContextResponse>("GET", CODE_ROUTES.context(codeId(id, "code context id")))).context;
}

export async function deleteCodeContext(api: ContainerApi, id: string): Promise<DeleteCodeContextResult> {
  return api.record<DeleteCodeContextResponse>("DELETE", CODE_ROUTES.context(codeId(id, "code context id")));
}

export async function restartCodeContext(api: ContainerApi, id: string): Promise<CodeContext> {
  return (await api.json<CodeContextResponse>("POST", CODE_ROUTES.restart(codeId(id, "code context id")), {})).context;
}

export async function runCode(api: ContainerApi, code: string, options: RunCodeRequestOptions = {}): Promise<Execution> {
  return api.json<Execution>("POST", CODE_ROUTES.run, parseRequest(runCodeRequestSchema, { ...options, code }, "run request"));
}

export async function runCodeStream(api: ContainerApi, code: string, options: RunCodeRequestOptions = {}): Promise<ReadableStream<Uint8Array>> {
  return api.stream("POST", CODE_ROUTES.runStream, parseRequest(runCodeRequestSchema, { ...options, code }, "run request"));
}

export async function resumeCodeStream(api: ContainerApi, executionId: string, options: StreamResumeRequest = {}): Promise<ReadableStream<Uint8Array>> {
  return api.stream("GET", CODE_ROUTES.executionStream(codeId(executionId, "run id")) + resumeQuery(options));
}

export async function interruptCode(api: ContainerApi, executionId: string): Promise<InterruptCodeResult> {
  return api.record<InterruptCodeResponse>("POST", CODE_ROUTES.interrupt(codeId(executionId, "run id")), {});
}

function codeId(id: string, what: string): string {
  return parseRequest(codeIdSchema, id, what);
}
