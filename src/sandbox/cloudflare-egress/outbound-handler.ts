/**
 * The Worker's outbound handler on Cloudflare: the platform hands it every HTTP and HTTPS request a
 * sandbox's container sends out (through the `ContainerProxy` entrypoint of @cloudflare/containers,
 * which names the container's Durable Object in its props). It asks that Durable Object to judge the
 * request with the sandbox's policy; a refusal is answered as the local proxy answers one
 * (protocol/egress-refusal.ts: 403, the rule in a header and the body); an allowed request goes out
 * with the injection rule's headers, redirects handed back to the container (which asks again for
 * wherever they lead), and its audit entry is given to the Durable Object once the answer's body has
 * been read to its end (or given up), with the bytes each way.
 *
 * Why here and not in the Durable Object: the bytes of a download then flow from the upstream to the
 * container through the Worker, never through the one Durable Object that also serves the sandbox's
 * API; the Durable Object answers two small calls per request. Secret values reach this handler only
 * as the headers of the request they go on, and leave it only on that request.
 *
 * Locally, workerd's interception hands the handler the container's requests the same way (through
 * the runtime's egress proxy and workerd's egress listener); an allowed request is then carried out
 * by the local runtime rather than by this Worker's `fetch` (judge.ts `carrier`): workerd runs on the
 * host, whose loopback and link-local addresses no sandbox may reach. The runtime refuses those
 * (403, rule `never`, as its proxy does) and answers everything else as it came.
 */
import type { OutboundHandler } from "@cloudflare/containers";
import { EGRESS_HEADER, refusalBody, refusalHeader, UPSTREAM_FAILED, upstreamFailureBody } from "../../../protocol/egress-refusal.ts";
import { redactSecrets } from "../../../protocol/network-policy.ts";
import { RUNTIME_EGRESS_SEND } from "../../../protocol/runtime.ts";
import type { Env } from "../../env.ts";
import { RuntimeChannel } from "../runtime-channel.ts";
import type { EgressJudge } from "./judge.ts";
import { joinedWebSockets } from "./websocket-relay.ts";

/** The name the handler is registered under (`static outboundHandlers`, `setOutboundHandler`). */
export const EGRESS_HANDLER = "sandboxEgress";

/** The rule a refusal names for an address no sandbox reaches (the local runtime's, as its proxy names it). */
const NEVER_RULE = "never";

/** Headers of one hop (RFC 9110 7.6.1), and the Host (the URL names the destination). A WebSocket handshake asks again for its upgrade. */
const HOP_HEADERS = ["connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade", "host"];

export const egressOutboundHandler: OutboundHandler<Env> = async (request, env, ctx) => {
  const judge = env.Sandbox.get(env.Sandbox.idFromString(ctx.containerId)) as unknown as EgressJudge;
  const judged = await judge.judgeEgress({ method: request.method, url: request.url });
  const { record } = judged;
  const refusal = (status: number, reason: string, rule: string) => {
    const refused = { method: request.method, tls: record.kind === "https", host: record.host, port: record.port ?? 0, path: record.path ?? "/" };
    return new Response(refusalBody(refused, reason, rule), {
      status,
      headers: { "content-type": "text/plain; charset=utf-8", [EGRESS_HEADER]: refusalHeader(rule) },
    });
  };
  if (!judged.allowed) {
    await request.body?.cancel();
    return refusal(judged.status, judged.reason, judged.rule);
  }

  const webSocket = request.headers.get("upgrade")?.toLowerCase() === "websocket";
  const headers = new Headers(request.headers);
  for (const name of HOP_HEADERS) headers.delete(name);
  // A WebSocket handshake keeps the two headers that ask for it: fetch then answers 101 with the server's socket.
  if (webSocket) headers.set("upgrade", "websocket");
  for (const [name, value] of Object.entries(judged.headers)) headers.set(name, value);
  const secrets = new Map([...Object.entries(judged.redact), ...Object.entries(judged.headers)]);
  const failure = (error: unknown) => redactSecrets(`upstream: ${error instanceof Error ? error.message : String(error)}`, secrets);
  const sent = counted(request.body);
  const carrier = judged.carrier !== undefined && env.SANDBOX_CONTAINER_URL ? new RuntimeChannel(env.SANDBOX_CONTAINER_URL, judged.carrier, env.SANDBOX_RUNTIME_SECRET) : undefined;
  const upstreamFailed = async (reason: string) => {
    await judge.recordEgress({ ...record, status: 502, bytesOut: sent.bytes(), reason: joined(record.reason, reason) });
    return new Response(upstreamFailureBody(record.host, record.port ?? 0, reason), {
      status: 502,
      headers: { "content-type": "text/plain; charset=utf-8", [EGRESS_HEADER]: UPSTREAM_FAILED },
    });
  };
  let answer: Response;
  try {
    answer = carrier
      ? await carrier.sendEgress({ method: request.method, url: request.url, headers, body: sent.body })
      : await fetch(request.url, { method: request.method, headers, body: sent.body, redirect: "manual" });
  } catch (error) {
    return upstreamFailed(failure(error));
  }
  const refusedByRuntime = carrier ? answer.headers.get(RUNTIME_EGRESS_SEND.refusedHeader) : null;
  if (refusedByRuntime !== null) {
    const reason = redactSecrets(await answer.text(), secrets);
    if (refusedByRuntime !== NEVER_RULE) return upstreamFailed(`upstream: ${reason}`);
    await judge.recordEgress({ ...record, decision: "denied", rule: NEVER_RULE, reason, status: 403, bytesOut: sent.bytes() });
    return refusal(403, reason, NEVER_RULE);
  }
  const finish = (bytesIn: number, why?: string, bytesOut = sent.bytes()) =>
    judge.recordEgress({ ...record, status: answer.status, bytesOut, bytesIn, ...(why || record.reason ? { reason: joined(record.reason, why) } : {}) });
  if (webSocket && answer.status === 101 && answer.webSocket) return joinedWebSockets(answer.webSocket, (bytesOut, bytesIn) => finish(bytesIn, undefined, bytesOut));
  if (answer.body === null) {
    await finish(0);
    return answer;
  }
  return new Response(relayed(answer.body, finish, failure), { status: answer.status, statusText: answer.statusText, headers: answer.headers });
};

function joined(first: string | undefined, second: string | undefined): string {
  return [first, second].filter((part) => part !== undefined && part !== "").join("; ");
}

/** The request body as it goes out, its bytes counted. */
function counted(body: ReadableStream<Uint8Array> | null): { body: ReadableStream<Uint8Array> | null; bytes: () => number } {
  let bytes = 0;
  if (body === null) return { body, bytes: () => bytes };
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      bytes += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { body: body.pipeThrough(counter), bytes: () => bytes };
}

/** The answer's body as it goes back to the container; its entry is recorded when it ends or the container stops reading. */
function relayed(body: ReadableStream<Uint8Array>, finish: (bytesIn: number, why?: string) => Promise<void>, failure: (error: unknown) => string): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let bytesIn = 0;
  let done = false;
  const end = async (why?: string) => {
    if (done) return;
    done = true;
    await finish(bytesIn, why);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        await end(failure(error));
        controller.error(error);
        return;
      }
      if (chunk.done) {
        await end();
        controller.close();
        return;
      }
      bytesIn += chunk.value.byteLength;
      controller.enqueue(chunk.value);
    },
    async cancel(reason) {
      await reader.cancel(reason);
      await end("the container stopped reading the answer");
    },
  });
}
