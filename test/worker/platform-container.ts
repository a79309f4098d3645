/**
 * The platform's `ctx.container` with a recorder around it, for the tests of egress on Cloudflare:
 * its lifecycle (start, ports, stop) is workerd's own container client on the local runtime's
 * engine, and the sandbox's Durable Object runs without the runtime's channel (entry.ts: its name
 * starts with `platform-`), so it takes the path it takes on Cloudflare. It records what the
 * Durable Object hands the container: the options of every start (the internet switch) and every
 * outbound interception (`interceptOutboundHttp`, `interceptAllOutboundHttp`,
 * `interceptOutboundHttps`, with the fetcher, which is the package's ContainerProxy entrypoint).
 *
 * It routes no traffic: the container's own requests never reach the fetchers here. Tests send
 * requests to the recorded fetcher themselves, as the platform would hand them over.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { getSandbox, type GetSandboxOptions } from "../../src/client/get-sandbox.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { PLATFORM_PATH_PREFIX } from "./entry.ts";
import { uniqueId } from "./helpers.ts";

export type InterceptionCall = "interceptOutboundHttp" | "interceptAllOutboundHttp" | "interceptOutboundHttps";

export interface RecordedInterception {
  call: InterceptionCall;
  /** The address or host pattern (`*` for every HTTPS destination); none for interceptAllOutboundHttp. */
  addr?: string;
  fetcher: Fetcher;
}

export class PlatformShapedContainer {
  readonly starts: { enableInternet?: boolean }[] = [];
  readonly interceptions: RecordedInterception[] = [];
  readonly #inner: Container;

  constructor(inner: Container) {
    this.#inner = inner;
  }

  get running(): boolean {
    return this.#inner.running;
  }

  start(options?: ContainerStartupOptions): void {
    this.starts.push({ ...(options?.enableInternet === undefined ? {} : { enableInternet: options.enableInternet }) });
    this.#inner.start(options);
  }

  monitor(): Promise<void> {
    return this.#inner.monitor();
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }

  signal(signo: number): void {
    this.#inner.signal(signo);
  }

  getTcpPort(port: number): Fetcher {
    return this.#inner.getTcpPort(port);
  }

  async interceptOutboundHttp(addr: string, fetcher: Fetcher): Promise<void> {
    this.interceptions.push({ call: "interceptOutboundHttp", addr, fetcher });
  }

  async interceptAllOutboundHttp(fetcher: Fetcher): Promise<void> {
    this.interceptions.push({ call: "interceptAllOutboundHttp", fetcher });
  }

  async interceptOutboundHttps(addr: string, fetcher: Fetcher): Promise<void> {
    this.interceptions.push({ call: "interceptOutboundHttps", addr, fetcher });
  }
}

/** What came back from a fetcher, read inside the Durable Object (its body cannot leave that request). */
export interface ProxiedAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface PlatformSandbox {
  id: string;
  sandbox: SandboxClient;
  /** The recorded starts and interceptions, without the fetchers. */
  recorded(): Promise<{ starts: { enableInternet?: boolean }[]; interceptions: Omit<RecordedInterception, "fetcher">[] }>;
  /**
   * Hands `request` to a fetcher the Durable Object registered, as the platform hands a container's
   * request over: the latest one for `call` (HTTP by default, HTTPS for https URLs), or the one at `index`.
   */
  send(request: { url: string; method?: string; headers?: Record<string, string>; body?: string }, pick?: { index?: number }): Promise<ProxiedAnswer>;
  /**
   * A WebSocket handshake handed over the same way; when the answer is 101, sends each message and
   * collects what comes back until `expect` messages arrived, then closes.
   */
  talk(url: string, headers: Record<string, string>, messages: string[], expect: number): Promise<{ status: number; received: string[] }>;
}

/** A sandbox whose Durable Object takes the platform's path, its container recorded (its lifecycle run by the main local runtime's engine). */
export async function platformSandbox(label: string, options?: GetSandboxOptions): Promise<PlatformSandbox> {
  const id = uniqueId(`${PLATFORM_PATH_PREFIX}${label}`);
  const stub = env.Sandbox.get(env.Sandbox.idFromName(id));
  await runInDurableObject(stub, (instance, state) => {
    const container = new PlatformShapedContainer(state.container!);
    Object.defineProperty(state, "container", { value: container, configurable: true });
    (instance as unknown as { container: PlatformShapedContainer }).container = container;
  });
  const standIn = (state: DurableObjectState) => state.container as unknown as PlatformShapedContainer;
  return {
    id,
    sandbox: getSandbox(env.Sandbox, id, options),
    recorded: () =>
      runInDurableObject(stub, (_instance, state) => ({
        starts: [...standIn(state).starts],
        interceptions: standIn(state).interceptions.map(({ call, addr }) => ({ call, ...(addr === undefined ? {} : { addr }) })),
      })),
    talk: (url, headers, messages, expect) =>
      runInDurableObject(stub, async (_instance, state) => {
        const chosen = standIn(state).interceptions.filter((interception) => interception.call === "interceptAllOutboundHttp").at(-1);
        if (!chosen) throw new Error("no interceptAllOutboundHttp was registered");
        const answer = await chosen.fetcher.fetch(new Request(url, { headers: { ...headers, upgrade: "websocket" } }));
        const socket = answer.webSocket;
        if (answer.status !== 101 || !socket) return { status: answer.status, received: [] };
        socket.accept();
        const received: string[] = [];
        await new Promise<void>((resolve, reject) => {
          socket.addEventListener("message", (event) => {
            received.push(typeof event.data === "string" ? event.data : new TextDecoder().decode(event.data));
            if (received.length === expect) resolve();
          });
          socket.addEventListener("close", () => resolve());
          socket.addEventListener("error", () => reject(new Error("the relayed WebSocket failed")));
          for (const message of messages) socket.send(message);
        });
        socket.close(1000, "done");
        return { status: answer.status, received };
      }),
    send: (request, pick = {}) =>
      runInDurableObject(stub, async (_instance, state) => {
        const call: InterceptionCall = request.url.startsWith("https:") ? "interceptOutboundHttps" : "interceptAllOutboundHttp";
        const matching = standIn(state).interceptions.filter((interception) => interception.call === call);
        const chosen = pick.index === undefined ? matching.at(-1) : matching[pick.index];
        if (!chosen) throw new Error(`no ${call} was registered`);
        const init: RequestInit = { method: request.method ?? "GET", redirect: "manual", ...(request.headers ? { headers: request.headers } : {}), ...(request.body === undefined ? {} : { body: request.body }) };
        const answer = await chosen.fetcher.fetch(new Request(request.url, init));
        return { status: answer.status, headers: Object.fromEntries(answer.headers), body: await answer.text() };
      }),
  };
}
