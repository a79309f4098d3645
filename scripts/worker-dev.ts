/**
 * The Worker under wrangler's dev server, as `npm start` runs it: a child process that receives its
 * settings in one IPC message, so the API token and the runtime's secret reach the Worker as bindings
 * in memory (wrangler's startWorker API), never on a command line (`ps` shows every argv to every
 * local user) or in an environment. The Worker's inspector, which can read every binding, stays
 * closed unless a port is given for it. Answers `{ready}` or `{error}`; SIGTERM stops it.
 */
import { randomUUID } from "node:crypto";
import { unstable_startWorker } from "wrangler";

export interface WorkerDevSettings {
  config: string;
  host: string;
  port: number;
  /** Unset: no inspector. */
  inspectorPort?: number;
  persistTo: string;
  /** Plain vars and secrets of the Worker. */
  vars: Record<string, string>;
  secrets: Record<string, string>;
}

export type WorkerDevAnswer = { ready: true } | { error: string };

function answer(message: WorkerDevAnswer): void {
  process.send?.(message);
}

// `npm start` gone without stopping us (we lead a process group of our own, so no Ctrl-C reaches us
// directly): the Worker goes too, whether it is up yet or not, and with it our whole group (workerd).
let disposing: (() => Promise<void>) | undefined;
process.once("disconnect", () => {
  const late = new Promise((resolve) => setTimeout(resolve, 3_000));
  void Promise.race([disposing?.(), late]).finally(() => {
    try {
      process.kill(-process.pid, "SIGKILL");
    } finally {
      process.exit(0); // not a group leader (started some other way): ourselves at least
    }
  });
});

// What wrangler and workerd write from here on (Durable Objects' SQLite files, the local R2 bucket)
// is the owner's only, as the folder it lands in (start.ts made or tightened it: private-state.ts).
process.umask(0o077);

process.once("message", async (settings: WorkerDevSettings) => {
  const bindings = {
    ...Object.fromEntries(Object.entries(settings.vars).map(([name, value]) => [name, { type: "plain_text", value }])),
    ...Object.fromEntries(Object.entries(settings.secrets).map(([name, value]) => [name, { type: "secret_text", value }])),
  };
  try {
    const worker = await unstable_startWorker({
      config: settings.config,
      bindings,
      dev: {
        server: { hostname: settings.host, port: settings.port },
        inspector: settings.inspectorPort === undefined ? false : { hostname: settings.host, port: settings.inspectorPort },
        persist: settings.persistTo,
        // workerd's own containers, through the runtime's engine (start.ts points wrangler at it).
        enableContainers: true,
        // The tag of this start's image (cloudflare-dev/sandbox:<id>), new at each start as `wrangler dev` makes it.
        containerBuildId: randomUUID().slice(0, 8),
        watch: true,
      },
    });
    disposing = () => worker.dispose();
    await worker.ready;
    answer({ ready: true });
  } catch (error) {
    // wrangler's own message is generic ("An error occurred when starting the server"): its cause says what.
    const cause = (error as Error).cause;
    answer({ error: `${(error as Error).message}${cause instanceof Error ? `: ${cause.message}` : ""}` });
    process.exit(1);
  }
});
