/**
 * What a sandbox's processes did, kept beyond their container. When the container sleeps (and, as
 * a fallback for a crash, each time work keeps it awake past an expiry) the Durable Object asks the
 * container for each background process's record and the tail of its log, and keeps them in its
 * storage. After the next start, getProcess, getProcessLogs and streamProcessLogs of a process the
 * new container does not know answer from here: its status (a process still running when its
 * container went is reported killed), its last output with the same seq and offsets it had, so a
 * reader resumes with the cursors it holds. destroy() forgets it, as it forgets the container.
 *
 * Bounded: TAIL_BYTES of output per process, MAX_PROCESSES processes (the most recent), one
 * storage value each, and only the last container's.
 */
import type { LogEvent } from "../../protocol/events.ts";
import { formatSseEvent } from "../../protocol/sse.ts";
import { isTerminalStatus, PROCESS_ROUTES, type ProcessInfo } from "../../protocol/process.ts";
import type { ProcessTailsResponse } from "../../protocol/process-tails.ts";
import type { ProcessLogs, ProcessRecord, StreamResumeRequest } from "../rpc/processes.ts";
import { outputText } from "../rpc/bytes.ts";
import type { ContainerApi } from "./container-api.ts";

/** Output kept per process: the end of what it wrote, enough to see how it went (one storage value stays well under its limit). */
export const TAIL_BYTES = 16 * 1024;
/** Processes kept at most: the most recently started. */
export const MAX_PROCESSES = 64;

const INDEX_KEY = "ledger:index";
const entryKey = (id: string) => `ledger:process:${id}`;

interface LedgerIndex {
  generation: string;
  ids: string[];
}

export interface LedgerEntry {
  generation: string;
  keptAt: string;
  process: ProcessInfo;
  events: LogEvent[];
}

export class ProcessLedger {
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /** Keeps what the running container (of `generation`) says of its processes, replacing what was kept. */
  async keep(api: ContainerApi, generation: string): Promise<void> {
    const { processes } = await api.json<ProcessTailsResponse>("GET", `${PROCESS_ROUTES.tails}?bytes=${TAIL_BYTES}`);
    const newest = processes.sort((a, b) => b.process.startTime.localeCompare(a.process.startTime)).slice(0, MAX_PROCESSES);
    const keptAt = new Date().toISOString();
    const entries = Object.fromEntries(newest.map(({ process, events }) => [entryKey(process.id), { generation, keptAt, process, events } satisfies LedgerEntry]));
    await this.forget();
    await this.#storage.put({ ...entries, [INDEX_KEY]: { generation, ids: newest.map(({ process }) => process.id) } satisfies LedgerIndex });
  }

  async forget(): Promise<void> {
    const index = await this.#storage.get<LedgerIndex>(INDEX_KEY);
    if (!index) return;
    await this.#storage.delete([INDEX_KEY, ...index.ids.map(entryKey)]);
  }

  /**
   * A kept process of a container other than `current` (the one running now knows its own), of
   * `generation` when the caller's handle names one.
   */
  async find(id: string, current: string, generation?: string): Promise<LedgerEntry | undefined> {
    const entry = await this.#storage.get<LedgerEntry>(entryKey(id));
    if (!entry || entry.generation === current) return undefined;
    if (generation !== undefined && entry.generation !== generation) return undefined;
    return entry;
  }
}

/** The kept record: a process that was still running when its container went is reported killed then. */
export function keptRecord(entry: LedgerEntry): ProcessRecord {
  const { process, generation, keptAt } = entry;
  if (isTerminalStatus(process.status)) return { ...process, generation };
  return { ...process, status: "killed", killed: true, endTime: keptAt, generation };
}

/** getProcessLogs' answer from the kept tail: the output it holds, and how much came before it. */
export function keptLogs(entry: LedgerEntry): ProcessLogs {
  const text = { stdout: "", stderr: "" };
  const dropped = { stdout: undefined as number | undefined, stderr: undefined as number | undefined };
  for (const event of entry.events) {
    if (event.type !== "stdout" && event.type !== "stderr") continue;
    dropped[event.type] ??= event.offset;
    text[event.type] += outputText(event);
  }
  return { processId: entry.process.id, stdout: text.stdout, stderr: text.stderr, stdoutDropped: dropped.stdout ?? 0, stderrDropped: dropped.stderr ?? 0 };
}

/** The kept events after the resume point, as the log stream's SSE, ending with `exit` like a live one. */
export function keptLogStream(entry: LedgerEntry, point: StreamResumeRequest): ReadableStream<Uint8Array> {
  const since = point.since ?? 0;
  const from = { stdout: point.stdoutOffset, stderr: point.stderrOffset };
  const record = keptRecord(entry);
  const encoder = new TextEncoder();
  let text = "";
  for (const event of entry.events) {
    if (event.seq !== undefined && event.seq <= since) continue;
    if ((event.type === "stdout" || event.type === "stderr") && event.encoding !== "base64") {
      // Within an event the reader had part of: what comes after its offset, as the container would send it.
      const start = from[event.type];
      const data = encoder.encode(event.data);
      if (start !== undefined && start >= event.offset + data.length) continue;
      if (start !== undefined && start > event.offset) {
        const rest: LogEvent = { ...event, offset: start, data: new TextDecoder().decode(data.subarray(start - event.offset)) };
        text += formatSseEvent(rest);
        continue;
      }
    }
    text += formatSseEvent(event);
  }
  const last = entry.events.at(-1);
  if (!(last?.type === "status" && isTerminalStatus(last.status))) {
    const ended: LogEvent = { type: "status", processId: record.id, timestamp: record.endTime ?? entry.keptAt, status: record.status };
    text += formatSseEvent(ended);
  }
  const exit: LogEvent = { type: "exit", processId: record.id, timestamp: record.endTime ?? entry.keptAt, status: record.status, ...(record.exitCode === undefined ? {} : { exitCode: record.exitCode }) };
  text += formatSseEvent(exit);
  const bytes = encoder.encode(text);
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}
