/**
 * The Worker of the workerd container test, as source text: a Durable Object that drives workerd's
 * own `ctx.container` (start, getTcpPort().fetch, signal, monitor, destroy) and answers what it saw.
 * The container server's secret goes to the container as the engine's reserved env var and along
 * with each request, as the Sandbox Durable Object would send it.
 */
export const WORKER_SOURCE = `
import { DurableObject } from "cloudflare:workers";

export class Box extends DurableObject {
  monitored = undefined;

  async fetch(request) {
    const url = new URL(request.url);
    const op = url.pathname.slice(1);
    const container = this.ctx.container;
    const secret = url.searchParams.get("secret") ?? "";
    try {
      if (op === "state") return Response.json({ present: container !== undefined, running: container?.running ?? null });
      if (op === "start") {
        container.start({ env: { GREETING: url.searchParams.get("greeting") ?? "hello", SANDBOX_ENGINE_SERVER_SECRET: secret }, enableInternet: false });
        this.monitored = container.monitor().then(() => "exited 0", (error) => "failed: " + String(error?.message ?? error));
        return Response.json({ running: container.running });
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
      if (op === "signal") {
        container.signal(Number(url.searchParams.get("signo")));
        return Response.json({ signalled: true });
      }
      if (op === "monitor") return Response.json({ monitor: await this.monitored, running: container.running });
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
