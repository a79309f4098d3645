/**
 * The file API acts as the sandbox's server, so `/proc/self`, `/proc/thread-self`, `/dev/fd`,
 * `/dev/stdin` and `/proc/<server pid>` name the server itself: its memory, its descriptors, its
 * environment. Every file route refuses them, whichever way the path gets there (directly, through a
 * link a command plants, through a folder a command keeps swapping for such a link), while the
 * processes of the sandbox's commands stay readable as any other file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { CLOUDFLARE_ROUTES } from "../../protocol/cloudflare-routes.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let t: SandboxServer;

beforeAll(async () => {
  t = await startSandbox({ isolation: "none" });
});
afterAll(() => t.close());

const files = (op: string, body: unknown) => t.post(`/api/files/${op}`, body);
const REFUSED = { status: 403, body: { code: "PERMISSION_DENIED" } };

/** Ways to name the server's own process (this test runs the server in-process: its pid is ours). */
function serverPaths(): string[] {
  // Only paths whose every link leads into the server: an operation on an entry itself (delete,
  // rename) is the sandbox's to do, and on a host (no container) /dev/stdin is the host's link.
  const threads = readdirSync("/proc/self/task").filter((tid) => tid !== String(process.pid));
  return [
    "/proc/self/environ",
    "/proc/self/mem",
    "/proc/self/fd/0",
    "/proc/thread-self/environ",
    `/proc/${process.pid}/environ`,
    `/proc/${process.pid}/fd`,
    `/proc/${process.pid}/task/${threads[0]}/environ`,
    // A thread's own directory: not listed in /proc, but there.
    `/proc/${threads[0]}/environ`,
    "/dev/fd/0",
    "/proc/self/../self/cmdline",
    // The process that started the server is not the sandbox's command either.
    `/proc/${process.ppid}/environ`,
  ];
}

describe("the server's own process", () => {
  it("is refused by every route, however it is named", async () => {
    for (const path of serverPaths()) {
      for (const [op, body] of [
        ["read", { path }],
        ["write", { path, content: "x" }],
        ["list", { path }],
        ["exists", { path }],
        ["mkdir", { path: `${path}/made`, recursive: true }],
        ["delete", { path, recursive: true }],
        ["rename", { oldPath: path, newPath: "got.txt" }],
        ["move", { sourcePath: path, destinationPath: "got.txt" }],
        ["changes", { path }],
        ["watch", { path }],
      ] as const) {
        expect(await files(op, body), `${op} ${path}`).toMatchObject(REFUSED);
      }
      const download = await fetch(`${t.url}/api/files/stream?path=${encodeURIComponent(path)}`);
      expect(download.status, `download ${path}`).toBe(403);
      const upload = await fetch(`${t.url}/api/files/stream?path=${encodeURIComponent(path)}`, { method: "PUT", body: "x" });
      expect(upload.status, `upload ${path}`).toBe(403);
    }
    // /dev/stdin is a link to the server's descriptor: what it leads to is refused.
    for (const op of ["read", "list", "exists", "changes"]) expect(await files(op, { path: "/dev/stdin" }), op).toMatchObject(REFUSED);
    expect(await files("write", { path: "/dev/stdin", content: "x" })).toMatchObject(REFUSED);
    expect(await t.post("/api/git/clone", { repoUrl: "https://example.invalid/r.git", targetDir: "/proc/self/clone" })).toMatchObject(REFUSED);
    expect(await t.post(CLOUDFLARE_ROUTES.backupCreate, { dir: "/proc/self", archivePath: "/tmp/server.tar" })).toMatchObject({ status: 403 });
    expect(await t.post(CLOUDFLARE_ROUTES.backupCreate, { dir: ".", archivePath: "/proc/self/backup" })).toMatchObject({ status: 403 });
  });

  it("stays refused through links a command plants, and a listing never walks into it", async () => {
    const planted = await t.exec({
      command: "ln -s /proc/self/environ leak && ln -s /proc/self pself && ln -s /dev/fd fds && ln -s ../../../../../../../../proc/thread-self up && mkdir -p tree && ln -s /proc/self tree/server",
    });
    expect(planted.body.exitCode).toBe(0);
    for (const path of ["leak", "pself/environ", "pself/mem", "fds/0", "up/environ", "tree/server/environ"]) {
      expect(await files("read", { path }), path).toMatchObject(REFUSED);
      expect(await files("write", { path, content: "x" }), path).toMatchObject(REFUSED);
    }
    expect(await files("list", { path: "pself/fd" })).toMatchObject(REFUSED);
    // The links themselves are the workspace's: listed as links, never followed.
    const listed = (await files("list", { path: ".", recursive: true })).body.files as { relativePath: string; type: string }[];
    expect(listed.find((f) => f.relativePath === "tree/server")).toMatchObject({ type: "symlink" });
    expect(listed.every((f) => !f.relativePath.startsWith("tree/server/"))).toBe(true);
    // And /proc listed recursively shows the server's entry but nothing inside it.
    const proc = (await files("list", { path: "/proc", recursive: true })).body.files as { relativePath: string }[];
    expect(proc.filter((f) => f.relativePath.startsWith(`${process.pid}/`))).toEqual([]);
  });

  it("leaves the processes of the sandbox's commands readable, as any file of the sandbox", async () => {
    const started = await t.post("/api/process/start", { command: "sleep 30", options: { env: { COMMAND_MARK: "visible-to-the-sandbox" } } });
    expect(started.status).toBe(200);
    const pid = started.body.process.pid as number;
    try {
      const environ = (await files("read", { path: `/proc/${pid}/environ` })).body;
      const text = environ.encoding === "base64" ? Buffer.from(environ.content, "base64").toString("latin1") : environ.content;
      expect(text).toContain("COMMAND_MARK=visible-to-the-sandbox");
      expect((await files("read", { path: "/proc/version" })).body.content).toBe(readFileSync("/proc/version", "utf8"));
    } finally {
      await fetch(`${t.url}/api/process/${started.body.process.id}?signal=SIGKILL`, { method: "DELETE" });
    }
  });
});

/** Runs in the sandbox: `d` is a link to /proc/self, then a link to a folder holding a decoy `environ`, then that folder itself… */
const SWAPPER = `
const fs = require("fs");
fs.mkdirSync("real", { recursive: true });
fs.writeFileSync("real/environ", "decoy");
fs.symlinkSync("real", "d");
fs.writeFileSync("swapping", "");
for (;;) {
  // A write through the API while "d" is briefly missing makes it a folder of its own (the API makes
  // missing parents), which would end the swapping for good: clear that and any half-made link.
  try { if (fs.lstatSync("d").isDirectory() && fs.existsSync("real")) fs.rmSync("d", { recursive: true }); } catch {}
  for (const stale of ["to-server", "to-real"]) fs.rmSync(stale, { force: true });
  try { fs.symlinkSync("/proc/self", "to-server"); fs.renameSync("to-server", "d"); } catch {}
  try { fs.symlinkSync("real", "to-real"); fs.renameSync("to-real", "d"); } catch {}
  try { fs.unlinkSync("d"); fs.renameSync("real", "d"); fs.renameSync("d", "real"); fs.symlinkSync("real", "d"); } catch {}
}`;

const ROUNDS = 300;

describe("a command racing a link to /proc/self against the file API", () => {
  // 1,200 calls one after another beside a command that keeps a core busy: a budget for a shared machine.
  it("never gets the server's environment, descriptors or memory", { timeout: 180_000 }, async () => {
    const swapper = await startSandbox({ isolation: "none" });
    try {
      const started = await swapper.post("/api/process/start", { command: process.execPath, args: ["-e", SWAPPER] });
      expect(started.status).toBe(200);
      for (let i = 0; i < 200 && !readdirSync(swapper.workspace).includes("swapping"); i++) await new Promise((r) => setTimeout(r, 25));
      const serverEnviron = readFileSync("/proc/self/environ", "latin1");
      const outcomes = new Map<string, number>();
      const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
      const leaks: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const read = await swapper.post("/api/files/read", { path: "d/environ" });
        const text = read.body.encoding === "base64" ? Buffer.from(read.body.content, "base64").toString("latin1") : read.body.content;
        if (read.status === 200 && text !== "decoy") leaks.push(`read: ${String(text).slice(0, 40)}`);
        count(`read ${read.status === 200 ? "decoy" : read.body.code}`);
        const download = await fetch(`${swapper.url}/api/files/stream?path=d/environ`);
        const body = await download.text();
        if (download.status === 200 && body !== "decoy") leaks.push(`download: ${body.slice(0, 40)}`);
        const listing = await swapper.post("/api/files/list", { path: "d" });
        const names = ((listing.body.files ?? []) as { name: string }[]).map((f) => f.name);
        if (names.includes("mem") || names.includes("fd")) leaks.push(`list: ${names.slice(0, 5).join(",")}`);
        count(`list ${listing.status === 200 ? "decoy" : listing.body.code}`);
        const write = await swapper.post("/api/files/write", { path: "d/comm", content: "hijacked" });
        if (readFileSync("/proc/self/comm", "utf8").includes("hijacked")) leaks.push("write: the server's comm changed");
        count(`write ${write.status === 200 ? "ok" : write.body.code}`);
      }
      expect(readFileSync("/proc/self/environ", "latin1")).toBe(serverEnviron);
      // The race really happened: some calls met the folder and some met the link (which call meets it
      // is the scheduler's choice).
      expect(outcomes.get("read decoy") ?? 0).toBeGreaterThan(0);
      const refused = ["read", "list", "write"].reduce((sum, call) => sum + (outcomes.get(`${call} PERMISSION_DENIED`) ?? 0), 0);
      expect(refused, JSON.stringify([...outcomes])).toBeGreaterThan(0);
      expect(leaks, JSON.stringify([...outcomes])).toEqual([]);
    } finally {
      await swapper.close();
    }
  });
});
