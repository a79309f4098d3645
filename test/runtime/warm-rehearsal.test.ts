/**
 * A warm server's rehearsal (container/boot/rehearsal.ts): before it is told its sandbox, the server
 * plays a ping and a command through a throwaway server of its own. The walls around it: until it
 * is handed its sandbox it listens on no socket (a command of another sandbox on the same loopback
 * that scans for it finds nothing to talk to), the rehearsal leaves no folder and no process behind
 * (and sweeps the folder of one whose server was killed outright), and the server it then starts
 * answers only to the secret it was handed. A real server started the way the runtime starts its
 * warm ones.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "node:http";
import { REHEARSAL_FOLDER_PREFIX } from "../../container/boot/rehearsal.ts";
import { REHEARSE_VAR } from "../../protocol/runtime.ts";
import { spawnUnassigned } from "../../runtime/container-process.ts";
import { directLauncher, serverEnv } from "../../runtime/launch.ts";
import { resolveIsolation } from "../../runtime/isolation.ts";
import { descendantsOf } from "../../runtime/process-tree.ts";
import { ServerChild } from "../../runtime/server-child.ts";
import { freePort } from "../../runtime/ports.ts";
import { eventually, tempDataDir, type DataDir } from "./helpers.ts";

/** What the pool starts its warm servers with. */
const WARM = { [REHEARSE_VAR]: "1" };

let dataDir: DataDir;
let server: ServerChild;
/** A rehearsal's folder left by a server killed outright while it rehearsed (its pid is gone). */
let leftBehind: string;
beforeAll(async () => {
  dataDir = tempDataDir();
  const gone = spawnSync("true").pid;
  leftBehind = join(tmpdir(), `${REHEARSAL_FOLDER_PREFIX}${gone}-AbC123`);
  mkdirSync(join(leftBehind, "workspace"), { recursive: true });
  const dir = join(dataDir.path, ".warm-rehearsal");
  mkdirSync(dir, { recursive: true });
  server = new ServerChild(await directLauncher.unassigned!(dir), dir, WARM, { bootedPipe: true });
  await server.booted;
});
afterAll(async () => {
  await server.kill();
  rmSync(leftBehind, { recursive: true, force: true });
  dataDir.remove();
});

/** Inodes of the sockets the process holds open. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/** Inodes of the listening sockets of the process's network namespace: TCP (state 0A) and Unix (flag __SO_ACCEPTCON). */
function listeningInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ["tcp", "tcp6"]) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, "utf8").trim().split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === "0A") inodes.add(fields[9]!);
    }
  }
  for (const line of readFileSync(`/proc/${pid}/net/unix`, "utf8").trim().split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if ((Number.parseInt(fields[3]!, 16) & 0x10000) !== 0) inodes.add(fields[6]!);
  }
  return inodes;
}

const listensOn = (pid: number) => [...socketInodes(pid)].filter((inode) => listeningInodes(pid).has(inode));

function get(port: number, path: string, secret: string | undefined): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: secret ? { authorization: `Bearer ${secret}` } : {} }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Writes a sandbox's assignment to a server waiting for one, as the runtime does; answers the port it is told to serve on. */
async function handSandbox(child: ServerChild, key: string, secret: string): Promise<number> {
  const port = await freePort();
  const sandboxDir = join(dataDir.path, key);
  const workspace = join(sandboxDir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const isolation = resolveIsolation({ mode: "none", env: {} }, {}, true);
  const env = serverEnv({ key, port, sandboxDir, workspace, env: {}, enableInternet: true, isolation: isolation.mode, isolationEnv: isolation.env });
  child.writeInput(JSON.stringify({ secret, env }));
  return port;
}

describe("a warm server's rehearsal", () => {
  it("serves nothing before it is handed its sandbox, leaves nothing behind, then answers only to its secret", async () => {
    const pid = server.child.pid!;
    expect(server.running).toBe(true);
    // It rehearsed (its log says so), and it did so with no socket to be reached on.
    expect(readFileSync(server.logPath, "utf8")).toContain("rehearsed its first requests");
    expect(listensOn(pid)).toEqual([]);
    // Nothing of the rehearsal is left: its folder, its server's state folder, its commands.
    const leftovers = readdirSync(tmpdir()).filter((name) => name.startsWith(`${REHEARSAL_FOLDER_PREFIX}${pid}-`) || name.startsWith(`sandbox-state-${pid}-`));
    expect(leftovers).toEqual([]);
    expect(existsSync(leftBehind)).toBe(false); // a killed server's, swept
    expect(await eventually(() => descendantsOf(pid).length === 0, 5_000)).toBe(true);

    // Handed its sandbox, it listens (the check above can see a listening socket) and answers only to the secret it was given.
    const secret = "handed-secret-of-this-sandbox";
    const port = await handSandbox(server, "wr-sandbox", secret);
    expect(await server.saysListening(15_000)).toBe(true);
    expect(listensOn(pid)).toHaveLength(1);
    expect((await get(port, "/api/ping", undefined)).status).toBe(401);
    expect((await get(port, "/api/ping", "not-the-secret")).status).toBe(401);
    const ping = await get(port, "/api/ping", secret);
    expect(ping.status).toBe(200);
    expect(JSON.parse(ping.body)).toMatchObject({ status: "ok" });
  });

  it("is cut short by a sandbox that takes the server before it is done, which it then serves", async () => {
    const dir = join(dataDir.path, ".warm-taken-early");
    mkdirSync(dir, { recursive: true });
    const early = new ServerChild(await directLauncher.unassigned!(dir), dir, WARM, { bootedPipe: true });
    try {
      const secret = "secret-of-the-early-sandbox";
      const port = await handSandbox(early, "wr-early", secret);
      expect(await early.saysListening(15_000)).toBe(true);
      expect((await get(port, "/api/ping", secret)).status).toBe(200);
      expect((await get(port, "/api/ping", undefined)).status).toBe(401);
      const pid = early.child.pid!;
      expect(readdirSync(tmpdir()).filter((name) => name.startsWith(`${REHEARSAL_FOLDER_PREFIX}${pid}-`))).toEqual([]);
    } finally {
      await early.kill();
    }
  });

  it("is not held by a server started for a sandbox that is told it at once", async () => {
    const dir = join(dataDir.path, "wr-cold");
    mkdirSync(dir, { recursive: true });
    const cold = (await spawnUnassigned(directLauncher, dir))!;
    try {
      const secret = "secret-of-the-cold-sandbox";
      const port = await handSandbox(cold, "wr-cold", secret);
      expect(await cold.saysListening(15_000)).toBe(true);
      expect((await get(port, "/api/ping", secret)).status).toBe(200);
      expect(readFileSync(cold.logPath, "utf8")).not.toContain("rehears");
    } finally {
      await cold.kill();
    }
  });
});
