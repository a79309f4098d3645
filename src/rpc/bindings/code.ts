/** The code interpreter over /v1: contexts, runs (buffered and streamed), resuming a run's stream, interrupting it (../code.ts has their options). */
import {
  codeContextSchema,
  createCodeContextRequestSchema,
  deleteCodeContextResultSchema,
  executionSchema,
  interruptCodeResultSchema,
  runCodeRequestSchema,
} from "../../../protocol/code.ts";
import { streamQuerySchema } from "../../../protocol/resume.ts";
import type { Binding } from "./binding.ts";

export const codeBindings = {
  createCodeContext: {
    verb: "POST",
    path: "/code/contexts",
    args: ["body"],
    body: createCodeContextRequestSchema,
    response: codeContextSchema,
    key: "context",
    status: 201,
    summary:
      "Create a code context: a Python (default), JavaScript or TypeScript interpreter that keeps its state (variables, imports, " +
      "functions, working directory) between runs. It starts in the sandbox's env, and a session's cwd and env when given.",
    described: "Created, its interpreter ready",
  },
  listCodeContexts: {
    verb: "GET",
    path: "/code/contexts",
    args: [],
    response: codeContextSchema.array(),
    key: "contexts",
    summary: "List code contexts (the default ones included, once made)",
    described: "Contexts",
  },
  getCodeContext: {
    verb: "GET",
    path: "/code/contexts/:cid",
    args: [{ path: "cid" }],
    response: codeContextSchema,
    key: "context",
    summary: "A code context (404 CODE_CONTEXT_NOT_FOUND once deleted, or after the container restarted)",
    described: "Context",
  },
  deleteCodeContext: {
    verb: "DELETE",
    path: "/code/contexts/:cid",
    args: [{ path: "cid" }],
    response: deleteCodeContextResultSchema,
    summary: "Delete a code context; its running and waiting runs end",
    described: "Deleted",
  },
  restartCodeContext: {
    verb: "POST",
    path: "/code/contexts/:cid/restart",
    args: [{ path: "cid" }],
    response: codeContextSchema,
    key: "context",
    summary: "Restart a code context: a fresh interpreter under the same id; its running and waiting runs end",
    described: "Restarted",
  },
  runCode: {
    verb: "POST",
    path: "/code/run",
    args: [{ body: "code" }, "body"],
    body: runCodeRequestSchema,
    response: executionSchema,
    summary:
      "Run code in a context (without contextId: the sandbox's default context for the language, made on first use). Errors in the code " +
      "are the Execution's `error`, not an error response. One cell runs at a time per context; a busy context makes the run wait " +
      "(or, with wait: false, fail with 409 CODE_CONTEXT_BUSY). `timeout` interrupts the cell; a cell that does not stop has its " +
      "interpreter killed and restarted (contextRestarted).",
    described: "The Execution: results (MIME bundles), logs, error, executionCount, duration",
    // Answered from the run's stream, with a space written now and then while the cell runs: a caller that went away interrupts it.
    byHand: ["route"],
  },
  runCodeStream: {
    verb: "POST",
    path: "/code/run/stream",
    args: [{ body: "code" }, "body"],
    body: runCodeRequestSchema,
    answer: "sse",
    summary: "Run code, streaming each event the moment it happens",
    described: "Code events.",
    events: "start, stdout, stderr, result, error, complete",
  },
  resumeCodeStream: {
    verb: "GET",
    path: "/code/executions/:eid/stream",
    args: [{ path: "eid" }, "resume"],
    query: streamQuerySchema,
    answer: "sse",
    summary: "Resume a broken run stream after an event id (Last-Event-ID or ?since=); works a short while after the run ended too",
    described: "Code events after the given one, ending with complete.",
    events: "start, stdout, stderr, result, error, complete, truncated",
  },
  interruptCode: {
    verb: "POST",
    path: "/code/executions/:eid/interrupt",
    args: [{ path: "eid" }],
    response: interruptCodeResultSchema,
    summary: "Interrupt a run (KeyboardInterrupt in Python; JavaScript execution is terminated). The context keeps its state.",
    described: "Interrupted",
  },
} as const satisfies Record<string, Binding>;
