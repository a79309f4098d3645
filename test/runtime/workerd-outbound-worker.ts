/**
 * The Worker of the outbound interception test, as source text: a Durable Object that starts a
 * container through workerd's own `ctx.container`, registers workerd's interceptions
 * (`interceptOutboundHttp`, `interceptOutboundHttps`, `interceptAllOutboundHttp`) with an entrypoint
 * of its own Worker as their handler, and runs commands in the container. The handler answers every
 * request it is handed with what it saw of it (method, URL, headers, body), so what a command in the
 * container prints is what the Worker got.
 */
export const OUTBOUND_WORKER_SOURCE = `
import { DurableObject, WorkerEntrypoint } from "cloudflare:workers";

export class Outbound extends WorkerEntrypoint {
  async fetch(request) {
    const body = await request.text();
    return Response.json(
      { handler: this.ctx.props.name, method: request.method, url: request.url, headers: Object.fromEntries(request.headers), body },
      { status: 207, headers: { "x-handled-by": "worker" } },
    );
  }
}

export class Box extends DurableObject {
  async fetch(request) {
    const url = new URL(request.url);
    const op = url.pathname.slice(1);
    const container = this.ctx.container;
    const secret = url.searchParams.get("secret") ?? "";
    try {
      if (op === "id") return Response.json({ id: this.ctx.id.toString() });
      if (op === "start") {
        const asked = await request.json();
        const handler = (name) => this.ctx.exports.Outbound({ props: { name } });
        for (const host of asked.http ?? []) await container.interceptOutboundHttp(host, handler("http " + host));
        for (const host of asked.https ?? []) await container.interceptOutboundHttps(host, handler("https " + host));
        if (asked.all) await container.interceptAllOutboundHttp(handler("all"));
        const env = { SANDBOX_ENGINE_SERVER_SECRET: secret, SANDBOX_ENGINE_START: JSON.stringify({ isolation: { allowNetwork: true } }) };
        container.start({ env, enableInternet: asked.internet });
        return Response.json({ running: container.running, id: this.ctx.id.toString() });
      }
      if (op === "exec") {
        const body = await request.text();
        for (let attempt = 0; ; attempt++) {
          try {
            const answer = await container.getTcpPort(3000).fetch("http://container/api/execute", {
              method: "POST",
              headers: { "content-type": "application/json", authorization: "Bearer " + secret },
              body,
            });
            return new Response(await answer.text(), { status: answer.status });
          } catch (error) {
            if (attempt >= 200) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      }
      if (op === "destroy") {
        await container.destroy();
        return Response.json({ running: container.running });
      }
      return new Response("unknown op", { status: 404 });
    } catch (error) {
      return Response.json({ error: String(error?.stack ?? error) }, { status: 500 });
    }
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const box = env.BOX.get(env.BOX.idFromName(url.searchParams.get("box") ?? "one"));
    return box.fetch(request);
  },
};
`;

/**
 * The same through @cloudflare/containers: a `Container` whose static `outboundByHost` and `outbound`
 * handlers (with `interceptHttps`) the package registers as workerd's interceptions, through its
 * `ContainerProxy` entrypoint, which the Worker exports. Commands reach the container server through
 * the package's own `fetch` (its start, its port check, `containerFetch`).
 */
export const PACKAGE_WORKER_SOURCE = `
import { Container, ContainerProxy } from "./containers/index.js";
export { ContainerProxy };

const echo = (tag) => async (request, env, ctx) => Response.json(
  { handler: tag, method: request.method, url: request.url, headers: Object.fromEntries(request.headers), body: await request.text(), fromContainer: typeof ctx.containerId === "string" },
  { status: 207, headers: { "x-handled-by": "worker" } },
);

export class Pkg extends Container {
  defaultPort = 3000;
  interceptHttps = true;
  enableInternet = false;
}
Pkg.outboundByHost = { "example.test": echo("outboundByHost example.test") };
Pkg.outbound = echo("outbound");

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const secret = url.searchParams.get("secret");
    const pkg = env.PKG.get(env.PKG.idFromName("pkg"));
    if (url.pathname === "/start") {
      await pkg.startAndWaitForPorts({ startOptions: { envVars: { SANDBOX_ENGINE_SERVER_SECRET: secret, SANDBOX_ENGINE_START: JSON.stringify({ isolation: { allowNetwork: true } }) } } });
      return new Response("started");
    }
    return pkg.fetch(new Request("http://container/api/execute", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer " + secret }, body: await request.text() }));
  },
};
`;

/** The package's modules as Miniflare loads them: its relative imports name them without an extension. */
export function packageModules(read: (path: string) => string): { type: "ESModule"; path: string; contents: string }[] {
  const dist = "node_modules/@cloudflare/containers/dist";
  return [
    { type: "ESModule", path: "worker.js", contents: PACKAGE_WORKER_SOURCE },
    { type: "ESModule", path: "containers/index.js", contents: read(`${dist}/index.js`) },
    ...["container", "helpers", "utils"].map((name) => ({ type: "ESModule" as const, path: `containers/lib/${name}`, contents: read(`${dist}/lib/${name}.js`) })),
  ];
}
