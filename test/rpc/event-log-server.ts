/**
 * A real HTTP server that serves one fixed event log the way the /v1 API serves a stream, and breaks
 * its connections where a test says: the client's resumable stream is only proven by connections
 * that really drop, at chosen bytes, and by resumes that really go over the wire.
 *
 * Each stream request (the first `POST …/exec/stream` or `GET …/logs/stream`, and every resume) takes
 * the next plan in order; with no plan left a request is served to the end. The answer is the log's
 * events after the request's resume point (Last-Event-ID or `?since=`, and the byte offsets per
 * stream, which move the start of an output event that straddles them), as protocol/resume.ts says
 * a resumed stream starts. The kill a client sends on abort is recorded and answered.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ResumePoint } from "../../protocol/resume.ts";
import { formatSseEvent, SSE_HEADERS } from "../../protocol/sse.ts";

/** One event of the log; output events list `data` last, as the wire puts it. */
export type LogEntry = Record<string, unknown> & { type: string; seq?: number };

/** What one stream connection does. Byte counts are of that connection's own body. */
export type ConnectionPlan =
  /** Send this many bytes of the body, then drop the connection (no clean end). */
  | { cutAfterBytes: number }
  /** Send this many bytes, then end the response cleanly, as if the stream were over. */
  | { endAfterBytes: number }
  /** Send this many bytes, then keep the connection open and silent. */
  | { holdAfterBytes: number }
  /** Send this many bytes, then the coded end a stream gets when its container stopped. */
  | { streamEndAfterBytes: number; code: string }
  /** Drop the connection before any answer. */
  | { reset: true }
  /** Answer with the service's error body. */
  | { status: number; code: string };

export interface StreamRequest {
  method: string;
  path: string;
  lastEventId: string | undefined;
  query: Record<string, string>;
}

export interface EventLogServer {
  url: string;
  /** Every stream request, in order. */
  readonly requests: StreamRequest[];
  /** Kill requests (`DELETE …/processes/:pid`), as paths with their query. */
  readonly kills: string[];
  /** Connections dropped by a `cutAfterBytes` plan so far. */
  readonly cuts: number;
  /** The body a stream request from `point` gets, whole. */
  bodyFrom(point: ResumePoint): Buffer;
  /** Plans for the next stream requests, in order. */
  plan(...plans: ConnectionPlan[]): void;
  /** Forgets the requests and kills seen and the plans not used. */
  reset(): void;
  close(): Promise<void>;
}

const isOutput = (entry: LogEntry) => entry.type === "stdout" || entry.type === "stderr";

/** An output event from byte `from` of its stream on (undefined when it lies wholly before). */
function fromOffset(entry: LogEntry, from: number | undefined): LogEntry | undefined {
  if (from === undefined) return entry;
  const bytes = Buffer.from(entry.data as string);
  const start = entry.offset as number;
  if (start + bytes.length <= from) return undefined;
  if (start >= from) return entry;
  const { data: _data, ...fields } = entry;
  return { ...fields, offset: from, data: bytes.subarray(from - start).toString() };
}

function resumePoint(request: IncomingMessage, url: URL): ResumePoint {
  const point: ResumePoint = {};
  const since = request.headers["last-event-id"] ?? url.searchParams.get("since") ?? undefined;
  if (since !== undefined) point.since = Number(since);
  for (const name of ["stdoutOffset", "stderrOffset"] as const) {
    const value = url.searchParams.get(name);
    if (value !== null) point[name] = Number(value);
  }
  return point;
}

export async function startEventLogServer(log: readonly LogEntry[]): Promise<EventLogServer> {
  const requests: StreamRequest[] = [];
  const kills: string[] = [];
  const plans: ConnectionPlan[] = [];
  let cuts = 0;

  const bodyFrom = (point: ResumePoint): Buffer => {
    let text = "";
    for (const entry of log) {
      if (point.since !== undefined && entry.seq !== undefined && entry.seq <= point.since) continue;
      const sent = isOutput(entry) ? fromOffset(entry, point[`${entry.type as "stdout" | "stderr"}Offset`]) : entry;
      if (sent) text += formatSseEvent(sent);
    }
    return Buffer.from(text);
  };

  const serveStream = (request: IncomingMessage, response: ServerResponse, url: URL) => {
    requests.push({
      method: request.method!,
      path: url.pathname,
      lastEventId: request.headers["last-event-id"] as string | undefined,
      query: Object.fromEntries(url.searchParams),
    });
    const plan = plans.shift();
    if (plan && "reset" in plan) return void response.socket?.destroy();
    if (plan && "status" in plan) {
      const body = { success: false, code: plan.code, message: `planned ${plan.code}`, httpStatus: plan.status, timestamp: new Date().toISOString() };
      return void response.writeHead(plan.status, { "content-type": "application/json" }).end(JSON.stringify(body));
    }
    const body = bodyFrom(resumePoint(request, url));
    response.writeHead(200, SSE_HEADERS);
    if (!plan) return void response.end(body);
    if ("cutAfterBytes" in plan) {
      return void response.write(body.subarray(0, plan.cutAfterBytes), () => {
        response.socket?.destroy();
        cuts++;
      });
    }
    if ("endAfterBytes" in plan) return void response.end(body.subarray(0, plan.endAfterBytes));
    if ("holdAfterBytes" in plan) return void response.write(body.subarray(0, plan.holdAfterBytes));
    const end = { type: "error", timestamp: new Date().toISOString(), error: "the container stopped", code: plan.code };
    response.end(Buffer.concat([body.subarray(0, plan.streamEndAfterBytes), Buffer.from(formatSseEvent(end))]));
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url!, "http://localhost");
    // Drain any request body first: an answer sent before it was read could be cut short by it.
    request.resume();
    request.on("end", () => {
      if (request.method === "DELETE" && url.pathname.includes("/processes/")) {
        kills.push(url.pathname + url.search);
        response.writeHead(200, { "content-type": "application/json" });
        return void response.end(JSON.stringify({ success: true, timestamp: new Date().toISOString() }));
      }
      if (url.pathname.endsWith("/stream")) return serveStream(request, response, url);
      response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ success: false, code: "NOT_FOUND", message: url.pathname, httpStatus: 404 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    kills,
    get cuts() {
      return cuts;
    },
    bodyFrom,
    plan: (...next) => void plans.push(...next),
    reset: () => {
      requests.length = 0;
      kills.length = 0;
      plans.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
