/**
 * Cloudflare's file-watch cases, ported to getSandbox: the watch starts with `watching`, reports
 * creation, modification and deletion, honours include and the default excludes, stops when the
 * reader leaves, refuses a path that does not exist; checkChanges tells whether a tree changed since a
 * version. Ours yields `change` events with `kind` and a path relative to the watched folder (theirs:
 * `event` with `eventType` and the absolute path), and checkChanges answers `changed` (theirs: `status`).
 */
import { afterAll, describe, expect, it } from "vitest";
import type { WatchEvent, WatchOptions } from "../../src/client/index.ts";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

type Change = Extract<WatchEvent, { type: "change" }>;

describe("file watch", () => {
  const sandbox = sandboxes.create("cf-watch");

  /**
   * Watches `path`, runs `act` once the watch is in place, and collects events until `done` says so
   * or `timeoutMs` passes.
   */
  async function watchWhile(path: string, options: WatchOptions, act: () => Promise<void>, done: (changes: Change[]) => boolean, timeoutMs = 8_000): Promise<{ events: WatchEvent[]; changes: Change[] }> {
    const events: WatchEvent[] = [];
    const changes: Change[] = [];
    try {
      for await (const event of sandbox.watch(path, { ...options, signal: AbortSignal.timeout(timeoutMs) })) {
        events.push(event);
        if (event.type === "watching") await act();
        if (event.type === "change") changes.push(event);
        if (event.type === "stopped" || event.type === "error" || done(changes)) break;
      }
    } catch (error) {
      if ((error as Error).name !== "TimeoutError" && (error as Error).name !== "AbortError") throw error;
    }
    return { events, changes };
  }

  it("starts with a watching event naming the path", async () => {
    await sandbox.mkdir("/workspace/watch-establish", { recursive: true });
    const { events } = await watchWhile("/workspace/watch-establish", {}, async () => {}, () => true, 2_000);
    expect(events[0]).toMatchObject({ type: "watching", path: "/workspace/watch-establish" });
  });

  it("checkChanges: unchanged at first, changed after a write, unchanged with no write", async () => {
    await sandbox.mkdir("/workspace/watch-check", { recursive: true });
    const first = await sandbox.checkChanges("/workspace/watch-check");
    expect(first.changed).toBe(false);
    expect(await sandbox.checkChanges("/workspace/watch-check", { since: first.version })).toMatchObject({ changed: false, version: first.version });
    await sandbox.writeFile("/workspace/watch-check/changed.txt", "hello");
    const second = await sandbox.checkChanges("/workspace/watch-check", { since: first.version });
    expect(second.changed).toBe(true);
    expect(second.version).not.toBe(first.version);
  });

  it("detects file creation", async () => {
    await sandbox.mkdir("/workspace/watch-create", { recursive: true });
    const { changes } = await watchWhile(
      "/workspace/watch-create",
      {},
      () => sandbox.writeFile("/workspace/watch-create/newfile.txt", "hello").then(() => undefined),
      (seen) => seen.some((c) => c.kind === "create"),
    );
    expect(changes.find((c) => c.kind === "create")?.path).toContain("newfile.txt");
  });

  it("detects file modification", async () => {
    await sandbox.writeFile("/workspace/watch-modify/existing.txt", "initial");
    const { changes } = await watchWhile(
      "/workspace/watch-modify",
      {},
      () => sandbox.writeFile("/workspace/watch-modify/existing.txt", "modified content").then(() => undefined),
      (seen) => seen.some((c) => c.kind === "modify"),
    );
    expect(changes.find((c) => c.kind === "modify")?.path).toContain("existing.txt");
  });

  it("detects file deletion", async () => {
    await sandbox.writeFile("/workspace/watch-delete/todelete.txt", "delete me");
    const { changes } = await watchWhile(
      "/workspace/watch-delete",
      {},
      () => sandbox.deleteFile("/workspace/watch-delete/todelete.txt").then(() => undefined),
      (seen) => seen.some((c) => c.kind === "delete"),
    );
    expect(changes.find((c) => c.kind === "delete")?.path).toContain("todelete.txt");
  });

  it("reports only what include matches", async () => {
    await sandbox.mkdir("/workspace/watch-include", { recursive: true });
    const { changes } = await watchWhile(
      "/workspace/watch-include",
      { include: ["*.ts"] },
      async () => {
        await sandbox.writeFile("/workspace/watch-include/code.ts", "typescript");
        await sandbox.writeFile("/workspace/watch-include/code.js", "javascript");
        await sandbox.writeFile("/workspace/watch-include/another.ts", "more typescript");
      },
      (seen) => seen.some((c) => c.path.includes("another.ts")),
    );
    expect(changes.filter((c) => c.path.endsWith(".ts")).length).toBeGreaterThan(0);
    expect(changes.filter((c) => c.path.endsWith(".js"))).toHaveLength(0);
  });

  it("stops when the reader leaves, and can be watched again", async () => {
    await sandbox.mkdir("/workspace/watch-stop", { recursive: true });
    for (let round = 0; round < 2; round++) {
      const { events } = await watchWhile("/workspace/watch-stop", {}, async () => {}, () => true, 3_000);
      expect(events[0]?.type).toBe("watching");
    }
  });

  it("refuses a path that does not exist", async () => {
    const attempt = (async () => {
      for await (const event of sandbox.watch("/workspace/does-not-exist-watch")) {
        if (event.type === "error") throw new Error(event.error);
        if (event.type === "watching") return "watching";
      }
      return "ended";
    })();
    await expect(attempt).rejects.toThrow(/not found|does not exist|no such/i);
  });

  it("leaves out node_modules and .git by default", async () => {
    await sandbox.mkdir("/workspace/watch-exclude/node_modules", { recursive: true });
    await sandbox.mkdir("/workspace/watch-exclude/.git", { recursive: true });
    const { changes } = await watchWhile(
      "/workspace/watch-exclude",
      {},
      async () => {
        await sandbox.writeFile("/workspace/watch-exclude/app.ts", "app code");
        await sandbox.writeFile("/workspace/watch-exclude/node_modules/dep.js", "dependency");
        await sandbox.writeFile("/workspace/watch-exclude/.git/config", "git config");
        await sandbox.writeFile("/workspace/watch-exclude/index.ts", "index");
      },
      (seen) => seen.some((c) => c.path.includes("index.ts")),
    );
    expect(changes.some((c) => c.path.includes("app.ts"))).toBe(true);
    expect(changes.filter((c) => c.path.includes("node_modules"))).toHaveLength(0);
    expect(changes.filter((c) => c.path.includes(".git"))).toHaveLength(0);
  });
});
