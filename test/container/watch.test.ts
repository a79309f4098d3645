/**
 * Watching files: `POST /api/files/watch` (changes as SSE, relative paths, globs, recursion, the end
 * when the reader goes away or the directory is removed) and `POST /api/files/changes` (a version
 * that moves with every change). Real directories, real inotify, real HTTP.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WATCH_LIMITS, type WatchEvent } from "../../protocol/watch.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { ChangeQueue } from "../../container/watch/change-queue.ts";
import { eventually, openStream } from "./helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let t: SandboxServer;

beforeAll(async () => {
  t = await startSandbox({ limits: { keepaliveMs: 100 } });
});
afterAll(() => t.close());

const ws = (...parts: string[]) => join(t.workspace, ...parts);

/** An open watch: its events as they come, and a way to go away. */
async function watchOf(body: Record<string, unknown>) {
  const abort = new AbortController();
  const response = await openStream(t.url, "/api/files/watch", { body, signal: abort.signal });
  const events = readEventStream<WatchEvent>(response.body!)[Symbol.asyncIterator]();
  const next = async (): Promise<WatchEvent> => {
    const { value, done } = await events.next();
    if (done) throw new Error("the watch stream ended");
    return value;
  };
  /** Changes until `until` says the wanted one came (bounded by the test's time limit). */
  const changesUntil = async (until: (event: WatchEvent) => boolean): Promise<WatchEvent[]> => {
    const seen: WatchEvent[] = [];
    for (;;) {
      const event = await next();
      seen.push(event);
      if (until(event)) return seen;
    }
  };
  const first = await next();
  return { first, next, changesUntil, close: () => abort.abort(), events };
}

const changeOf = (event: WatchEvent) => (event.type === "change" ? `${event.kind} ${event.path}${event.isDirectory ? "/" : ""}` : event.type);

/** Directory descriptors and inotify watches this process holds. */
function watchResources(): { inotifyWatches: number; dirHandles: number } {
  let inotifyWatches = 0;
  let dirHandles = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const info = readFileSync(`/proc/self/fdinfo/${fd}`, "utf8");
      inotifyWatches += info.split("\n").filter((line) => line.startsWith("inotify wd:")).length;
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(t.workspace)) dirHandles++;
    } catch {
      // closed meanwhile
    }
  }
  return { inotifyWatches, dirHandles };
}

describe("watch", () => {
  it("starts with `watching`, then reports creates, writes and deletes with paths relative to the root", async () => {
    mkdirSync(ws("w1"));
    const watch = await watchOf({ path: "w1" });
    expect(watch.first).toEqual({ type: "watching", path: ws("w1"), recursive: true });

    writeFileSync(ws("w1/a.txt"), "one");
    expect((await watch.changesUntil((e) => changeOf(e) === "create a.txt")).map(changeOf)).toEqual(["create a.txt"]);
    writeFileSync(ws("w1/a.txt"), "two");
    await watch.changesUntil((e) => changeOf(e) === "modify a.txt");
    mkdirSync(ws("w1/sub/deeper"), { recursive: true });
    writeFileSync(ws("w1/sub/deeper/b.txt"), "b");
    const nested = (await watch.changesUntil((e) => changeOf(e) === "create sub/deeper/b.txt")).map(changeOf);
    expect(nested).toEqual(expect.arrayContaining(["create sub/", "create sub/deeper/", "create sub/deeper/b.txt"]));
    rmSync(ws("w1/a.txt"));
    await watch.changesUntil((e) => changeOf(e) === "delete a.txt");
    renameSync(ws("w1/sub/deeper/b.txt"), ws("w1/c.txt"));
    const moved = await watch.changesUntil((e) => changeOf(e) === "create c.txt");
    expect(moved.map(changeOf)).toContain("delete sub/deeper/b.txt");
    expect(moved.at(-1)).toEqual({ type: "change", kind: "create", path: "c.txt", isDirectory: false, timestamp: expect.any(String) });
    watch.close();
  });

  it("follows a directory that is removed and made again under the same name", async () => {
    mkdirSync(ws("w7/dir"), { recursive: true });
    const watch = await watchOf({ path: "w7" });
    rmSync(ws("w7/dir"), { recursive: true });
    mkdirSync(ws("w7/dir"));
    await watch.changesUntil((e) => changeOf(e) === "create dir/");
    writeFileSync(ws("w7/dir/inside.txt"), "x");
    await watch.changesUntil((e) => changeOf(e) === "create dir/inside.txt");
    watch.close();
  });

  it("stays in the directory itself with recursive: false", async () => {
    mkdirSync(ws("w2/sub"), { recursive: true });
    const watch = await watchOf({ path: "w2", recursive: false });
    writeFileSync(ws("w2/sub/ignored.txt"), "x");
    writeFileSync(ws("w2/top.txt"), "x");
    expect((await watch.changesUntil((e) => changeOf(e) === "create top.txt")).map(changeOf)).not.toContain("create sub/ignored.txt");
    watch.close();
  });

  it("leaves out .git and node_modules by default, and keeps to `include` or out of `exclude`", async () => {
    mkdirSync(ws("w3/node_modules/pkg"), { recursive: true });
    mkdirSync(ws("w3/src"), { recursive: true });
    const byDefault = await watchOf({ path: "w3" });
    writeFileSync(ws("w3/node_modules/pkg/index.js"), "x");
    writeFileSync(ws("w3/src/seen.js"), "x");
    expect((await byDefault.changesUntil((e) => changeOf(e) === "create src/seen.js")).map(changeOf)).toEqual(["create src/seen.js"]);
    byDefault.close();

    const included = await watchOf({ path: "w3", include: ["*.ts"] });
    writeFileSync(ws("w3/src/skipped.js"), "x");
    writeFileSync(ws("w3/src/kept.ts"), "x");
    expect((await included.changesUntil((e) => changeOf(e) === "create src/kept.ts")).map(changeOf)).toEqual(["create src/kept.ts"]);
    included.close();

    const excluded = await watchOf({ path: "w3", exclude: ["src/**/*.log"] });
    writeFileSync(ws("w3/src/noise.log"), "x");
    writeFileSync(ws("w3/node_modules/pkg/now-seen.js"), "x");
    expect((await excluded.changesUntil((e) => changeOf(e) === "create node_modules/pkg/now-seen.js")).map(changeOf)).toEqual([
      "create node_modules/pkg/now-seen.js",
    ]);
    excluded.close();
  });

  it("sends keepalives on a quiet stream", async () => {
    mkdirSync(ws("w4"));
    const response = await openStream(t.url, "/api/files/watch", { body: { path: "w4" } });
    const reader = response.body!.getReader();
    let text = "";
    while (!text.includes(": keepalive")) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
  });

  it("closes the watch (inotify watches, directory descriptors) when the reader goes away", async () => {
    mkdirSync(ws("w5/a/b/c"), { recursive: true });
    // Watches of the tests before have gone (their readers went away).
    expect(await eventually(() => watchResources().dirHandles === 0)).toBe(true);
    const before = watchResources();
    const watch = await watchOf({ path: "w5" });
    const during = watchResources();
    expect(during.inotifyWatches - before.inotifyWatches).toBe(4);
    expect(during.dirHandles - before.dirHandles).toBe(4);
    watch.close();
    expect(await eventually(() => {
      const after = watchResources();
      return after.inotifyWatches === before.inotifyWatches && after.dirHandles === before.dirHandles;
    })).toBe(true);
  });

  it("refuses a tree of more directories than a watch follows, and holds nothing after", async () => {
    mkdirSync(ws("big"));
    execFileSync("bash", ["-c", `cd big && mkdir d{1..${WATCH_LIMITS.maxWatchedDirectories}}`], { cwd: t.workspace });
    expect(await eventually(() => watchResources().dirHandles === 0)).toBe(true);
    const reply = await t.post("/api/files/watch", { path: "big" });
    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({ code: "WATCH_LIMIT_EXCEEDED", context: { maxDirectories: WATCH_LIMITS.maxWatchedDirectories } });
    expect(await eventually(() => watchResources().dirHandles === 0)).toBe(true);
    // Leaving some out brings it under the limit.
    const watch = await watchOf({ path: "big", exclude: ["d1*"] });
    expect(watch.first).toMatchObject({ type: "watching" });
    watch.close();
    rmSync(ws("big"), { recursive: true });
  });

  it("ends with `stopped` when the watched directory is removed", async () => {
    mkdirSync(ws("w6/inner"), { recursive: true });
    const watch = await watchOf({ path: "w6" });
    rmSync(ws("w6"), { recursive: true });
    const rest: WatchEvent[] = [];
    for (;;) {
      const { value, done } = await watch.events.next();
      if (done) break;
      rest.push(value);
    }
    expect(rest.at(-1)).toEqual({ type: "stopped", reason: "the watched directory was removed" });
    expect(rest.map(changeOf)).toContain("delete inner/");
  });

  it("watches a folder outside the workspace by its absolute path", async () => {
    const outside = mkdtempSync(join(tmpdir(), "sandbox-watch-outside-"));
    try {
      const watch = await watchOf({ path: outside });
      expect(watch.first).toEqual({ type: "watching", path: outside, recursive: true });
      writeFileSync(join(outside, "seen.txt"), "x");
      await watch.changesUntil((e) => changeOf(e) === "create seen.txt");
      watch.close();
      const version = (await t.post("/api/files/changes", { path: outside })).body;
      expect(version).toMatchObject({ path: outside, version: expect.any(String) });
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("refuses the server's own process, files and missing directories before the stream starts", async () => {
    writeFileSync(ws("plain.txt"), "x");
    for (const [path, code, status] of [
      ["/proc/self", "PERMISSION_DENIED", 403],
      ["/dev/fd", "PERMISSION_DENIED", 403],
      ["plain.txt", "NOT_A_DIRECTORY", 409],
      ["missing", "FILE_NOT_FOUND", 404],
    ] as const) {
      const reply = await t.post("/api/files/watch", { path });
      expect(reply.status, path).toBe(status);
      expect(reply.body.code, path).toBe(code);
    }
    expect((await t.post("/api/files/watch", { path: "w1", include: ["[ab]"] })).body.code).toBe("INVALID_REQUEST");
  });
});

describe("the queue of a slow reader", () => {
  it("merges changes to the same path and counts what it had to drop", () => {
    const queue = new ChangeQueue(3);
    queue.push({ kind: "create", path: "a", isDirectory: false });
    queue.push({ kind: "modify", path: "a", isDirectory: false });
    queue.push({ kind: "modify", path: "b", isDirectory: false });
    queue.push({ kind: "delete", path: "b", isDirectory: false });
    queue.push({ kind: "create", path: "c", isDirectory: true });
    for (let i = 0; i < 5; i++) queue.push({ kind: "create", path: `more-${i}`, isDirectory: false });
    queue.push({ kind: "modify", path: "a", isDirectory: false });
    const { changes, dropped } = queue.take();
    expect(changes.map((c) => `${c.kind} ${c.path}`)).toEqual(["create a", "delete b", "create c"]);
    expect(dropped).toBe(5);
    expect(queue.take()).toEqual({ changes: [], dropped: 0 });
  });
});

describe("changes since a version", () => {
  it("keeps the version while nothing changes and moves it with every change", async () => {
    mkdirSync(ws("v1/sub"), { recursive: true });
    writeFileSync(ws("v1/sub/file.txt"), "one");
    const first = await t.post("/api/files/changes", { path: "v1" });
    expect(first.body).toMatchObject({ success: true, path: ws("v1"), changed: false, entries: 2, version: expect.stringMatching(/^v1:/) });
    const { version } = first.body;
    expect((await t.post("/api/files/changes", { path: "v1", since: version })).body).toMatchObject({ changed: false, version });

    writeFileSync(ws("v1/sub/file.txt"), "two");
    const written = await t.post("/api/files/changes", { path: "v1", since: version });
    expect(written.body.changed).toBe(true);
    expect(written.body.version).not.toBe(version);

    mkdirSync(ws("v1/node_modules"));
    writeFileSync(ws("v1/node_modules/dep.js"), "x");
    expect((await t.post("/api/files/changes", { path: "v1", since: written.body.version })).body.changed).toBe(false);
    expect((await t.post("/api/files/changes", { path: "v1", since: written.body.version, recursive: false })).body.changed).toBe(true);
    expect((await t.post("/api/files/changes", { path: "v1", since: "not-a-version" })).body.changed).toBe(true);
  });

  it("covers a single file too", async () => {
    writeFileSync(ws("single.txt"), "a");
    const { version } = (await t.post("/api/files/changes", { path: "single.txt" })).body;
    writeFileSync(ws("single.txt"), "bb");
    expect((await t.post("/api/files/changes", { path: "single.txt", since: version })).body.changed).toBe(true);
  });
});
