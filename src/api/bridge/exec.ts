/**
 * `POST /v1/sandbox/:id/exec {argv, timeout_ms?, cwd?}` (a `Session-Id` header runs it in that
 * session): the command's output as Server-Sent Events, `stdout` / `stderr` with the base64 of the
 * raw bytes, then `exit` `{"exit_code": N}` (124 for a command killed at its `timeout_ms`), or
 * `error` `{error, code}`.
 *
 * Without a `Session-Id`, argv runs as given (no shell), from the default session's cwd and env. In a
 * named session it runs as one command line of the session's shell, each word quoted, so that `cd`
 * or `export` given as argv change the session, as they do in Cloudflare's bridge. The events are our exec stream read with the client's
 * resumable reader: when the stream to the Durable Object breaks, it picks up after the last event it
 * had, so the tail of the output is never lost; keepalives hold quiet commands' connections open.
 */
import { Hono } from "hono";
import { z } from "zod";
import { timedOutResult, type ExecEvent } from "../../../protocol/events.ts";
import { LIMITS } from "../../../protocol/limits.ts";
import { execEvents, newCommandId } from "../../rpc/event-streams.ts";
import { SandboxError } from "../../rpc/errors.ts";
import type { ExecRequestOptions } from "../../rpc/processes.ts";
import type { SandboxRpc } from "../../rpc/sandbox-rpc.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";
import { bridgeCode } from "./errors.ts";
import { bridgeEventStream, type BridgeEventStream } from "./event-stream.ts";
import { workspaceRelative } from "./paths.ts";
import { SESSION_HEADER, sessionHeader } from "./sessions.ts";

export const bridgeExecRequestSchema = z.object({
  argv: z.array(z.string()).min(1, "argv must be a non-empty array"),
  timeout_ms: z.number().int().positive().max(LIMITS.maxTimeoutMs).optional(),
  cwd: z.string().min(1).optional(),
});

/** One word of a shell command line: as it is when it needs no quoting, else in single quotes. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Our exec events → Bridge events, up to `exit` or `error`. */
async function relay(events: AsyncIterable<ExecEvent>, out: BridgeEventStream): Promise<void> {
  for await (const event of events) {
    switch (event.type) {
      case "stdout":
      case "stderr":
        // Asked for as base64: the raw bytes, whatever they are.
        await out.send(event.type, event.data);
        break;
      case "complete":
        await out.send("exit", JSON.stringify({ exit_code: event.exitCode }));
        return;
      case "error": {
        // Past timeout_ms: an exit, 124, as the frameworks on the Bridge (ComputeSDK, OpenAI Agents) read a timed-out command.
        const timedOut = timedOutResult(event);
        if (timedOut) await out.send("exit", JSON.stringify({ exit_code: timedOut.exitCode }));
        else await out.send("error", JSON.stringify({ error: event.error, code: "exec_error" }));
        return;
      }
      case "truncated":
        // Only a reader that stayed away past the exec's retention sees this: say what is missing.
        await out.send("truncated", JSON.stringify({ dropped_bytes: event.droppedBytes }));
        break;
    }
  }
}

/**
 * The Bridge event stream of one command. `keepaliveMs`: how long the stream may stay quiet before a
 * keepalive comment goes out. A command that cannot start, or a stream that cannot be resumed, ends
 * the stream with `error`; a reader that goes away gets nothing more (its command runs on).
 */
export function bridgeExecResponse(rpc: SandboxRpc, command: string, wire: ExecRequestOptions, keepaliveMs: number = LIMITS.keepaliveMs): Response {
  const out = bridgeEventStream(keepaliveMs);
  void relay(execEvents(rpc, command, { ...wire, processId: wire.processId ?? newCommandId() }, {}), out)
    .catch((error: unknown) => {
      const code = error instanceof SandboxError ? bridgeCode(error.code) : "exec_transport_error";
      return out.send("error", JSON.stringify({ error: (error as Error).message, code })).catch(() => undefined);
    })
    .finally(() => out.close());
  return out.response;
}

export const bridgeExecRoutes = new Hono<ApiEnv>().post("/exec", jsonBody(bridgeExecRequestSchema), async (c) => {
  const { argv, timeout_ms, cwd } = c.req.valid("json");
  const sessionId = sessionHeader(c.req.header(SESSION_HEADER));
  const [program, ...args] = argv as [string, ...string[]];
  const command = sessionId === undefined ? program : argv.map(shellWord).join(" ");
  const wire: ExecRequestOptions = {
    ...(sessionId === undefined ? { args } : {}),
    encoding: "base64",
    ...(cwd === undefined ? {} : { cwd: workspaceRelative(cwd) }),
    ...(timeout_ms === undefined ? {} : { timeout: timeout_ms }),
    ...(sessionId === undefined ? {} : { sessionId }),
  };
  return bridgeExecResponse(c.var.sandbox, command, wire);
});
