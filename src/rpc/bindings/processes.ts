/** Commands and background processes over /v1 (../processes.ts has their options). */
import { z } from "zod";
import {
  execRequestSchema,
  execResultSchema,
  execTimeoutResponseSchema,
  generationQuerySchema,
  killAllQuerySchema,
  killQuerySchema,
  killResultSchema,
  listQuerySchema,
  processLogsSchema,
  processRecordSchema,
  startProcessRequestSchema,
  stdinRequestSchema,
  stdinResultSchema,
} from "../../../protocol/process.ts";
import { streamQuerySchema } from "../../../protocol/resume.ts";
import { execStreamUrlFieldsSchema, execStreamUrlSchema } from "../../../protocol/stream-url.ts";
import { ERROR_CODES } from "../../../protocol/errors.ts";
import type { Binding } from "./binding.ts";

const resumeNote = "and from byte offsets per stream (stdoutOffset, stderrOffset)";

export const processBindings = {
  exec: {
    verb: "POST",
    path: "/exec",
    args: [{ body: "command" }, "body"],
    body: execRequestSchema.extend(execStreamUrlFieldsSchema.shape),
    response: execResultSchema,
    summary:
      'Run a command to completion; or, with stream: "url", start it in the background and answer at once with its processId, pid and a ' +
      "signed URL of its event stream (GET /exec/{pid}/stream, for EventSource; resumable with Last-Event-ID)",
    described: "Result (success: exit code 0, not timed out)",
    alsoAnswers: [
      { status: 202, response: execStreamUrlSchema, described: 'Started (stream: "url"): { processId, pid, url, expiresAt }' },
      {
        status: ERROR_CODES.EXECUTION_TIMEOUT,
        response: execTimeoutResponseSchema,
        described: "EXECUTION_TIMEOUT: the command ran out of its time limit and was killed; `context` is its result so far (output up to the kill, exit code 124, signal)",
      },
    ],
    // stream: "url" starts the command in the background and mints its stream's URL.
    byHand: ["route"],
  },
  execStream: {
    verb: "POST",
    path: "/exec/stream",
    args: [{ body: "command" }, "body"],
    body: execRequestSchema,
    answer: "sse",
    summary: "Run a command, streaming its output",
    described: "Exec events.",
    events: "start, stdout, stderr, complete, error (code EXECUTION_TIMEOUT with `result` when the command ran out of its time limit)",
  },
  resumeExecStream: {
    verb: "GET",
    path: "/exec/:pid/stream",
    args: [{ path: "pid" }, "resume"],
    query: streamQuerySchema,
    answer: "sse",
    summary: `Resume a broken exec stream (or attach to a running exec) after an event id (Last-Event-ID or ?since=) and from byte offsets per stream (stdoutOffset, stderrOffset: an event cut in the middle goes on from the byte after the part that came); works a short while after the command ended too`,
    described: "Exec events after the given one, ending with complete (the result) or error.",
    events: "start, stdout, stderr, complete, error, truncated",
    signed: true,
    // A signed URL's grant is checked first (it names one run of the exec).
    byHand: ["route"],
  },
  startProcess: {
    verb: "POST",
    path: "/processes",
    args: [{ body: "command" }, "body"],
    body: startProcessRequestSchema,
    response: processRecordSchema,
    key: "process",
    status: 201,
    summary: "Start a background process",
    described: "Started",
  },
  listProcesses: {
    verb: "GET",
    path: "/processes",
    args: ["query"],
    query: listQuerySchema,
    response: processRecordSchema.array(),
    key: "processes",
    summary: "List processes",
    described: "Processes",
  },
  killAllProcesses: {
    verb: "DELETE",
    path: "/processes",
    args: ["query"],
    query: killAllQuerySchema,
    response: z.number().int(),
    key: "killed",
    summary: "Kill all processes",
    described: "Killed",
  },
  cleanupCompletedProcesses: {
    verb: "POST",
    path: "/processes/cleanup",
    args: [],
    response: z.number().int(),
    key: "cleaned",
    summary: "Forget finished processes",
    described: "Cleaned",
  },
  getProcess: {
    verb: "GET",
    path: "/processes/:pid",
    args: [{ path: "pid" }, "query"],
    query: generationQuerySchema,
    response: processRecordSchema,
    key: "process",
    summary: "A process",
    described: "Process",
    // The method's null is the route's 404 PROCESS_NOT_FOUND, and back.
    byHand: ["route", "client"],
  },
  killProcess: {
    verb: "DELETE",
    path: "/processes/:pid",
    args: [{ path: "pid" }, { query: "signal" }, "query"],
    query: killQuerySchema,
    response: killResultSchema,
    summary: "Signal a process",
    described: "Signalled",
  },
  getProcessLogs: {
    verb: "GET",
    path: "/processes/:pid/logs",
    args: [{ path: "pid" }, "query"],
    query: generationQuerySchema,
    response: processLogsSchema,
    summary: "Output so far",
    described: "Logs",
  },
  streamProcessLogs: {
    verb: "GET",
    path: "/processes/:pid/logs/stream",
    args: [{ path: "pid" }, "resume"],
    query: streamQuerySchema,
    answer: "sse",
    summary: `Follow a process's output; resumable with Last-Event-ID or ?since=, ${resumeNote}`,
    described: "Log events, ending after the final status.",
    events: "stdout, stderr, status, truncated, error",
    signed: true,
    byHand: ["route"],
  },
  writeStdin: {
    verb: "POST",
    path: "/processes/:pid/stdin",
    args: [{ path: "pid" }, { body: "data" }, "body"],
    query: generationQuerySchema,
    body: stdinRequestSchema,
    response: stdinResultSchema,
    summary: "Write to (or close) a process's stdin",
    described: "Written",
    // One route for writing and closing; the generation goes in the query, the rest in the body.
    byHand: ["route", "client"],
  },
  closeStdin: {
    verb: "POST",
    path: "/processes/:pid/stdin",
    args: [{ path: "pid" }, "query"],
    query: generationQuerySchema,
    response: stdinResultSchema,
    summary: "Close a process's stdin",
    // Documented with writeStdin: the same route.
    byHand: ["route", "client", "openapi"],
  },
} as const satisfies Record<string, Binding>;
