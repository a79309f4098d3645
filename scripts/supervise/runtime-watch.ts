/**
 * Watches `npm start`'s local runtime, which runs in the start process itself: it cannot be restarted
 * without stopping every sandbox, so when its server stops answering (three probes in a row), the
 * start gives up loudly instead of serving a Worker whose containers are gone.
 */
import type { RunningRuntime } from "../../runtime/server.ts";
import { answers } from "./answers.ts";

export interface RuntimeWatch {
  stop(): void;
}

export interface RuntimeWatchOptions {
  say(line: string): void;
  giveUp(reason: string): void;
  everyMs?: number;
}

export function watchRuntime(runtime: RunningRuntime, options: RuntimeWatchOptions): RuntimeWatch {
  const headers = { authorization: `Bearer ${runtime.secret}` };
  let failures = 0;
  let probing = false;
  const timer = setInterval(async () => {
    if (probing) return;
    probing = true;
    const ok = await answers(`${runtime.url}/health`, 3_000, headers);
    probing = false;
    if (ok && failures > 0) options.say(`  health: the local runtime answers again on ${runtime.url}`);
    failures = ok ? 0 : failures + 1;
    if (failures === 3) options.giveUp(`the local runtime stopped answering on ${runtime.url}`);
  }, options.everyMs ?? 5_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
