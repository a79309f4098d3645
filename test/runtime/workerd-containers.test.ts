/**
 * workerd's own container client against the runtime's Docker engine: a Durable Object whose
 * `ctx.container` is workerd's (Miniflare pointed at the engine's socket, as `wrangler dev` with
 * containers on would be) starts a container of the runtime's, reaches its server through
 * `getTcpPort(3000).fetch` (workerd's tunnel through the emulated sidecar), signals it, sees the end
 * in `monitor()`, starts it again and destroys it. Then the drift check: every call the installed
 * workerd made in that lifecycle was one the engine serves; a failure names each one it did not.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { EGRESS_SIDECAR_IMAGE } from "../../runtime/docker-engine/names.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { tempDataDir, type DataDir } from "./helpers.ts";
import { WORKER_SOURCE } from "./workerd-container-worker.ts";

const SECRET = "workerd-engine-test-secret-0123456789";

let dataDir: DataDir;
let runtime: RunningRuntime;
let mf: Miniflare;
beforeAll(async () => {
  dataDir = tempDataDir();
  runtime = await startRuntime({ dataDir: dataDir.path, isolation: detectIsolation().bwrap.available ? "bwrap" : "none", stopGraceMs: 2_000 });
  // Miniflare's v4 option shape (one worker from a script), which it converts itself.
  mf = new Miniflare(convertV4MiniflareOptions({
    containerEngine: { localDocker: { socketPath: runtime.engine.url, containerEgressInterceptorImage: EGRESS_SIDECAR_IMAGE } },
    workers: [
      {
        name: "box",
        modules: true,
        script: WORKER_SOURCE,
        compatibilityDate: "2026-10-20",
        durableObjects: { BOX: { className: "Box", container: { imageName: "cloudflare-dev/box:engine-test" } } },
      },
    ],
  }));
  await mf.ready;
}, 60_000);
afterAll(async () => {
  await mf?.dispose();
  await runtime?.close();
  dataDir?.remove();
});

async function op(name: string, query: Record<string, string> = {}, body?: unknown): Promise<{ status: number; body: any }> {
  const search = new URLSearchParams({ secret: SECRET, ...query });
  const response = await mf.dispatchFetch(`http://worker/${name}?${search}`, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, body: parsed };
}

describe("workerd's ctx.container on the runtime's Docker engine", () => {
  it("starts a container, reaches its server, signals, monitors, restarts and destroys it", async () => {
    expect((await op("state")).body).toEqual({ present: true, running: false });
    expect((await op("start", { greeting: "bonjour" })).body).toEqual({ running: true });
    const exec = await op("exec", {}, { command: 'echo "$GREETING from $(id -u)"' });
    expect(exec.status, JSON.stringify(exec.body)).toBe(200);
    expect(JSON.stringify(exec.body)).toContain("bonjour from");

    expect((await op("signal", { signo: "15" })).body).toEqual({ signalled: true });
    // The server stops cleanly on SIGTERM: workerd's monitor() resolves (exit status 0).
    expect((await op("monitor")).body).toEqual({ monitor: "exited 0", running: false });

    expect((await op("start", { greeting: "again" })).body).toEqual({ running: true });
    expect(JSON.stringify((await op("exec", {}, { command: "echo $GREETING" })).body)).toContain("again");
    expect((await op("destroy")).body).toEqual({ running: false });
  });

  it("was called only in ways it serves (a workerd upgrade that calls something new fails here, naming it)", () => {
    const unserved = runtime.engine.unserved.map((call) => `${call.method} ${call.path}`);
    expect(unserved, `the Docker engine did not serve: ${unserved.join(", ")}`).toEqual([]);
  });
});
