/**
 * Archives against a command racing symlinks, in a sandbox's container. A command keeps swapping a
 * folder of its workspace with a symlink to a host folder (by its host path, and by the paths a
 * container might use to reach the host), while the API packs the workspace, extracts into it with
 * `clear` (which removes), and packs that folder alone, over and over. The server doing that work runs
 * inside the container as the sandbox's own user, so the host folder is out of its reach: no archive
 * holds its secret, nothing is written there and nothing of it is removed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { create } from "tar";
import { ContainerPool } from "../../runtime/pool.ts";
import { directLauncher } from "../../runtime/launch.ts";
import type { ContainerProcess } from "../../runtime/container-process.ts";
import { ARCHIVE_ROUTES } from "../../protocol/archive.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { containerCall, tempDataDir, type DataDir } from "./helpers.ts";

const SECRET = "host-secret-7f3a";
const ROUNDS = 40;

let dataDir: DataDir;
let pool: ContainerPool;
let hostDir: string;
beforeAll(() => {
  dataDir = tempDataDir();
  hostDir = join(dataDir.path, "host-files");
  mkdirSync(hostDir);
  chmodSync(hostDir, 0o777); // even a folder anyone may write
  writeFileSync(join(hostDir, "secret.txt"), SECRET);
  writeFileSync(join(hostDir, "victim.txt"), "keep me");
  chmodSync(join(hostDir, "victim.txt"), 0o666);
  pool = new ContainerPool({ dataDir: join(dataDir.path, "sandboxes"), launcher: directLauncher, isolation: { mode: "bwrap", env: {} }, stopGraceMs: 1_000 });
});
afterAll(async () => {
  await pool.stopAll();
  dataDir.remove();
});

/** The answer, or undefined where the server refused the body and closed the connection (a refused extraction may). */
async function request(container: ContainerProcess, method: string, path: string, body?: BodyInit, type = "application/json"): Promise<Response | undefined> {
  return fetch(`http://127.0.0.1:${container.port}${path}`, {
    method,
    headers: { authorization: `Bearer ${container.secret}`, "content-type": type },
    ...(body === undefined ? {} : { body, duplex: "half" }),
  } as RequestInit).catch(() => undefined);
}

async function archiveOf(entries: Record<string, string>): Promise<Buffer> {
  const dir = join(dataDir.path, `src-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(dir, "d"), { recursive: true });
  for (const [name, text] of Object.entries(entries)) writeFileSync(join(dir, name), text);
  const chunks: Buffer[] = [];
  for await (const chunk of create({ cwd: dir, gzip: true, portable: true }, Object.keys(entries))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe.skipIf(!detectIsolation().bwrap.available)("archives in a sandbox's container, against a racing command", () => {
  it("never reach a host folder a swapped symlink points at", async () => {
    const container = await pool.start("archive-race", {});
    // The racer: a folder, then a symlink to the host folder (and to container paths a host could hide behind).
    const racer = `while :; do for t in ${hostDir} /proc/1/root${hostDir} /proc/self/root${hostDir}; do rm -rf d; mkdir d; echo mine > d/f; rm -rf d; ln -s "$t" d; done; done`;
    const started = await containerCall(container, "POST", "/api/process/start", { command: racer, processId: "racer" });
    expect(started.status).toBe(200);
    const upload = await archiveOf({ "d/f": "written-by-extract", "d/victim.txt": "overwritten" });
    let archives = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const [whole, folder, extracted] = await Promise.all([
        request(container, "POST", ARCHIVE_ROUTES.create, JSON.stringify({ format: "tar" })),
        request(container, "POST", ARCHIVE_ROUTES.create, JSON.stringify({ paths: ["d"], format: "tar" })),
        request(container, "PUT", `${ARCHIVE_ROUTES.extract}?clear=true&paths=d`, new Uint8Array(upload), "application/gzip"),
      ]);
      for (const response of [whole, folder]) {
        if (!response) continue;
        const bytes = Buffer.from(await response.arrayBuffer().catch(() => new ArrayBuffer(0)));
        if (response.ok) archives++;
        expect(bytes.includes(SECRET)).toBe(false);
      }
      await extracted?.arrayBuffer().catch(() => undefined);
    }
    expect(archives).toBeGreaterThan(0);
    // The host folder is exactly as it was.
    expect(readdirSync(hostDir).sort()).toEqual(["secret.txt", "victim.txt"]);
    expect(readFileSync(join(hostDir, "secret.txt"), "utf8")).toBe(SECRET);
    expect(readFileSync(join(hostDir, "victim.txt"), "utf8")).toBe("keep me");
    await containerCall(container, "DELETE", "/api/process/racer");
  });
});
