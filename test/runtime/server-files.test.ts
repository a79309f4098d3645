/**
 * A checkout under a folder closed to others (root's 0700 home) cannot be bound by a container's
 * unprivileged user: the runtime stages the server's files elsewhere, once, and containers run from
 * them exactly as from the checkout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chmodSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { ContainerPool } from "../../runtime/pool.ts";
import { directLauncher } from "../../runtime/launch.ts";
import { containerSettings } from "../../runtime/container/settings.ts";
import { closedAncestor } from "../../runtime/container/reachable.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { containerCall, tempDataDir, type DataDir } from "./helpers.ts";

let dataDir: DataDir;
beforeAll(() => {
  dataDir = tempDataDir();
});
afterAll(() => dataDir.remove());

describe("the container server's files", () => {
  it("finds a folder closed to others on the way to a path", () => {
    const closed = join(dataDir.path, "closed");
    mkdirSync(join(closed, "inside"), { recursive: true });
    chmodSync(closed, 0o700);
    expect(closedAncestor(join(closed, "inside", "file"))).toBe(closed);
    expect(closedAncestor("/usr/bin/env")).toBeUndefined();
  });

  it.skipIf(!detectIsolation().bwrap.available)("staged, run a container as the checkout's do", async () => {
    const stageRoot = join(dataDir.path, "stage");
    const dir = join(dataDir.path, "sandboxes");
    const pool = new ContainerPool({
      dataDir: dir,
      launcher: directLauncher,
      isolation: { mode: "bwrap", env: {} },
      stopGraceMs: 1_000,
      containers: containerSettings({ dataDir: dir, stageServer: { force: true, stageRoot } }),
    });
    try {
      const container = await pool.start("staged", {});
      const reply = await containerCall(container, "POST", "/api/execute", { command: "pwd; node -v; id -un" });
      expect(reply.body.stdout).toBe(`/workspace\n${process.version}\nroot\n`);
      const [staged] = readdirSync(stageRoot);
      expect(staged).toMatch(new RegExp(`-${process.version.replace(/\./g, "\\.")}$`));
      expect(statSync(stageRoot).mode & 0o777).toBe(0o755);
    } finally {
      await pool.stopAll();
    }
  });
});
