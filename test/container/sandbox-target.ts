/**
 * A sandbox of the local runtime, reached over HTTP as the Durable Object reaches it: on this
 * machine's system folders, or, under `npm run test:image`, on the built image's root file system.
 */
import { chmodSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { directLauncher } from "../../runtime/launch.ts";
import { ContainerPool } from "../../runtime/pool.ts";
import { containerSettings } from "../../runtime/container/settings.ts";
import { testImage } from "./image-server.ts";

export interface SandboxTarget {
  /** The runtime's data folder on the host: no path the API returns may lie in it. */
  hostDir: string;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startSandboxTarget(key: string): Promise<SandboxTarget> {
  const hostDir = realpathSync(mkdtempSync(join(tmpdir(), "sandbox-target-")));
  chmodSync(hostDir, 0o711); // its containers' users pass through to their own folders
  const rootfs = testImage()?.rootfs;
  const pool = new ContainerPool({
    dataDir: hostDir,
    launcher: directLauncher,
    isolation: { mode: "bwrap", env: {} },
    stopGraceMs: 1_000,
    // An image mounted by buildah lies in its root-only storage: its containers run as this user.
    containers: containerSettings({ dataDir: hostDir, ...(rootfs ? { rootfs, switchUsers: false } : {}) }),
  });
  const container = await pool.start(key, {});
  const url = `http://127.0.0.1:${container.port}`;
  return {
    hostDir,
    async call(method, path, body) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${container.secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    async close() {
      await pool.stopAll();
      rmSync(hostDir, { recursive: true, force: true });
    },
  };
}
