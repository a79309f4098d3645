/**
 * Folders the stack makes for itself are made with the modes it needs: a data folder whose parents
 * do not exist yet (SANDBOX_DATA_DIR=<dir>/sandbox beside WRANGLER_PERSIST_TO=<dir>/wrangler on a
 * fresh machine) gets parents that containers' users may pass through, so its sandboxes start. A
 * recursive mkdir of the private data folder made `<dir>` 0700, and every start was then refused as
 * "closed to others".
 */
import { chmodSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { containerCall } from "./helpers.ts";

const bwrap = detectIsolation().bwrap.available;
const mode = (path: string) => statSync(path).mode & 0o777;

const top = mkdtempSync(join(tmpdir(), "sandbox-made-folders-"));
let runtime: RunningRuntime | undefined;
afterAll(async () => {
  await runtime?.close();
  rmSync(top, { recursive: true, force: true });
});

describe("folders the runtime makes", () => {
  it.skipIf(!bwrap)("are passable above a new data folder, and its sandboxes start", async () => {
    // A folder others may pass, as /home/someone or /srv is; below it, nothing exists yet.
    chmodSync(top, 0o711);
    const dir = join(top, "stack", "here");
    runtime = await startRuntime({ dataDir: join(dir, "sandbox"), isolation: "bwrap", warmServers: 0 });
    expect(mode(join(top, "stack"))).toBe(0o711);
    expect(mode(dir)).toBe(0o711);
    // The data folder itself stays closed to listing: 0700, or 0711 where containers run as other users.
    expect([0o700, 0o711]).toContain(mode(join(dir, "sandbox")));

    const container = await runtime.pool.start("made-folders", {});
    const reply = await containerCall(container, "POST", "/api/execute", { command: "echo in" });
    expect(reply.body.stdout).toBe("in\n");
  });
});
