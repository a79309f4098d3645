/**
 * An allowed host folder swapped for a symlink while sandboxes that mount it start: whoever can write
 * the allowed root (another sandbox with it read-write, a user of the machine) keeps renaming a real
 * folder and a symlink to a secret folder into place. Every start either is refused or binds exactly
 * the folder that was checked: no container ever sees the secret.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ContainerPool } from "../../runtime/pool.ts";
import { directLauncher } from "../../runtime/launch.ts";
import { containerSettings } from "../../runtime/container/settings.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { isServiceError } from "../../server-kit/service-error.ts";
import { containerCall, tempDataDir, type DataDir } from "./helpers.ts";

const STARTS = 24;

let dataDir: DataDir;
let pool: ContainerPool;
let allowed: string;
let swapper: ChildProcess;
beforeAll(() => {
  dataDir = tempDataDir();
  allowed = join(dataDir.path, "allowed");
  const secret = join(dataDir.path, "secret");
  mkdirSync(join(allowed, "real"), { recursive: true });
  mkdirSync(secret);
  writeFileSync(join(allowed, "real", "note.txt"), "shared");
  writeFileSync(join(secret, "note.txt"), "host-secret");
  chmodSync(secret, 0o755);
  const dir = join(dataDir.path, "sandboxes");
  pool = new ContainerPool({
    dataDir: dir,
    launcher: directLauncher,
    isolation: { mode: "bwrap", env: {} },
    stopGraceMs: 1_000,
    containers: containerSettings({ dataDir: dir, allowedPaths: [allowed] }),
  });
  // `shared` is, in turn, the real folder and a symlink to the secret one, each moved in by a rename.
  swapper = spawn("bash", [
    "-c",
    `cd ${allowed} && ln -sfn ${secret} link && while :; do mv -T real shared; sleep 0.15; mv -T shared real; mv -T link shared; sleep 0.05; mv -T shared link; done`,
  ]);
});
afterAll(async () => {
  swapper.kill("SIGKILL");
  await pool.stopAll();
  dataDir.remove();
});

describe.skipIf(!detectIsolation().bwrap.available)("an allowed path swapped for a symlink while sandboxes start", () => {
  it("is bound only as it was checked, or refused", async () => {
    let bound = 0;
    let refused = 0;
    let caughtAfterMount = 0;
    const seenBySandboxes: string[] = [];
    for (let i = 0; i < STARTS; i++) {
      const key = `race-${i}`;
      let container;
      try {
        container = await pool.start(key, { isolation: { readOnlyPaths: [join(allowed, "shared")] } });
      } catch (error) {
        // Refused at the check (a symlink then, or gone mid-rename) or after the mount (swapped in between).
        const cause = error as Error & { logTail?: string };
        expect(isServiceError(error) || /shared|No such file|Can't find source path/.test(cause.logTail ?? cause.message)).toBe(true);
        refused++;
        if (/between its check and its mount/.test(cause.message)) caughtAfterMount++;
        continue;
      }
      const seen = await containerCall(container, "POST", "/api/execute", { command: `cat ${join(allowed, "shared")}/note.txt` });
      seenBySandboxes.push(seen.body.stdout);
      bound++;
      await pool.destroy(key);
    }
    console.log(`allowed-path race: ${bound} bound as checked, ${refused} refused (${caughtAfterMount} caught after the mount)`);
    expect(bound + refused).toBe(STARTS);
    expect(seenBySandboxes.filter((text) => text.includes("host-secret"))).toEqual([]);
    expect(bound).toBeGreaterThan(0);
  }, 120_000);
});
