/**
 * The code interpreter as Cloudflare's Sandbox SDK asks for it (its InterpreterClient, which their
 * CodeInterpreter's createCodeContext, runCode, runCodeStream, listCodeContexts and
 * deleteCodeContext call):
 *
 *   POST   /api/contexts        {language, cwd, env_vars?}  → {success, contextId, language, cwd, timestamp}
 *   GET    /api/contexts                                    → {success, contexts: [{id, language, cwd}], timestamp}
 *   DELETE /api/contexts/{id}                               → {success, contextId, timestamp}
 *   POST   /api/execute/code    {context_id, code, language?, timeout_ms?, env_vars?}
 *          → SSE `data:` lines: stdout/stderr {text}, result {text, html, png, …}, error {ename, evalue,
 *            traceback}, execution_complete {execution_count}, each with a timestamp in milliseconds
 *
 * Each maps onto the interpreter operation our own code routes call; only the shapes are converted.
 * A run's stream is read like ours (pinned: the cell runs at the reader's pace rather than lose
 * output), and a reader that goes away leaves the cell running, as on our routes.
 */
import { StringDecoder } from "node:string_decoder";
import { createCodeContextRequestSchema, runCodeRequestSchema, type CodeContext, type CodeEvent } from "../../../../protocol/code.ts";
import { sendOk } from "../../../../server-kit/http/response.ts";
import { LogReader, type LogItem } from "../../../engine/log-reader.ts";
import { toCodeEvent } from "../../../interpreter/events.ts";
import { TextFrame, type Framer } from "../../streams/sse-frames.ts";
import { streamLogAsSse } from "../../streams/sse.ts";
import type { RequestContext, Route } from "../../types.ts";
import { cloudflareRoute } from "./errors.ts";
import { readTheirJson } from "./requests.ts";
import { CLOUDFLARE_ROUTES } from "../../../../protocol/cloudflare-routes.ts";

function theirContext(context: CodeContext): { id: string; language: string; cwd: string } {
  return { id: context.id, language: context.language, cwd: context.cwd };
}

async function createContext(ctx: RequestContext): Promise<void> {
  const request = await readTheirJson(ctx, createCodeContextRequestSchema, ({ env_vars, ...rest }) => ({
    ...rest,
    ...(env_vars === undefined || env_vars === null ? {} : { env: env_vars }),
  }));
  const context = (await ctx.server.code.create(request)).info();
  // Their client dates the context by the reply's timestamp.
  sendOk(ctx.res, { contextId: context.id, language: context.language, cwd: context.cwd, timestamp: context.createdAt });
}

function listContexts(ctx: RequestContext): void {
  const contexts = ctx.server.code.list().map((context) => theirContext(context.info()));
  sendOk(ctx.res, { contexts, timestamp: new Date().toISOString() });
}

async function deleteContext(ctx: RequestContext): Promise<void> {
  const contextId = ctx.params.id!;
  await ctx.server.code.delete(contextId);
  sendOk(ctx.res, { contextId, timestamp: new Date().toISOString() });
}

/** Their run request, renamed into ours; our schema then applies our checks and limits. */
function ourRunRequest({ context_id, timeout_ms, env_vars, ...rest }: Record<string, unknown>): Record<string, unknown> {
  return {
    ...rest,
    ...(env_vars === undefined || env_vars === null ? {} : { env: env_vars }),
    ...(context_id === undefined || context_id === null ? {} : { contextId: context_id }),
    ...(timeout_ms === undefined || timeout_ms === null ? {} : { timeout: timeout_ms }),
  };
}

type TheirEvent = { type: string; timestamp: number } & Record<string, unknown>;

/**
 * One of our run's events in their words, but output, which the framer decodes itself; `start` and
 * `truncated` have no counterpart there.
 */
function theirEvent(event: CodeEvent, timestamp: number): TheirEvent | undefined {
  switch (event.type) {
    case "result": {
      const { isMainResult: _isMainResult, ...formats } = event.result;
      return { type: "result", ...formats, timestamp };
    }
    case "error":
      return { type: "error", ename: event.error.name, evalue: event.error.value, traceback: event.error.traceback, timestamp };
    case "complete":
      return { type: "execution_complete", execution_count: event.executionCount, timestamp };
    case "stdout":
    case "stderr":
    case "start":
    case "truncated":
      return undefined;
  }
}

const frameOf = (event: TheirEvent | undefined): TextFrame => new TextFrame(event ? `data: ${JSON.stringify(event)}\n\n` : "");

/**
 * Their stream's frames. Output is decoded per stream across chunks, so a character cut between two
 * chunks of the log reaches their reader whole.
 */
function theirFramer(): Framer {
  const decoders = { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") };
  return (item: LogItem) => {
    if (item.kind === "output") {
      const text = decoders[item.stream].write(item.data);
      return frameOf(text === "" ? undefined : { type: item.stream, text, timestamp: item.time });
    }
    return frameOf(theirEvent(toCodeEvent(item), item.time));
  };
}

async function runStream(ctx: RequestContext): Promise<void> {
  const request = await readTheirJson(ctx, runCodeRequestSchema, ourRunRequest);
  const execution = await ctx.server.code.run(request, { buffered: false });
  const reader = new LogReader(execution.log, 0, { pin: true });
  try {
    await streamLogAsSse(ctx, reader, theirFramer());
  } finally {
    reader.unpin();
  }
}

export const cloudflareCodeInterpreterRoutes: Route[] = [
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.contexts, createContext),
  cloudflareRoute("GET", CLOUDFLARE_ROUTES.contexts, listContexts),
  cloudflareRoute("DELETE", CLOUDFLARE_ROUTES.context.pattern, deleteContext),
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.executeCode, runStream),
];
