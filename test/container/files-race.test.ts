/**
 * A command that swaps a workspace directory for a symlink to an outside folder, as fast as it can,
 * while the file API works on paths through that directory. Where the server sits outside its
 * commands' walls (bwrap around each command), the file API keeps to the workspace and the
 * configured paths: whatever the interleaving, nothing outside may be created, deleted, renamed,
 * listed or read. (Where the server is the sandbox, every path is the sandbox's but the server's own
 * process: files-server-process.test.ts races a link to that.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapUnavailableReason, startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

/**
 * Runs in the sandbox: `d` is a directory, then missing, then a symlink to the outside folder, then
 * missing… (the system's Python: commands under bwrap see the system's programs, not this checkout's Node).
 */
const SWAPPER = `
import os, shutil, sys
outside = sys.argv[1]
os.makedirs("d", exist_ok=True)
open("swapping", "w").close()
while True:
    for step in (lambda: os.rename("d", "parked"), lambda: os.symlink(outside, "d"), lambda: os.unlink("d")):
        try: step()
        except OSError: pass
    try: os.rename("parked", "d")
    except OSError:
        # The API made a new "d" while it was missing: drop it and put the parked one back.
        try:
            shutil.rmtree("d", ignore_errors=True); os.rename("parked", "d")
        except OSError: pass
`;

const ROUNDS = 150;

let t: SandboxServer;
let outside: string;

/** What the outside folder holds, names and contents, to compare after every call. */
function snapshot(dir = outside, prefix = ""): string[] {
  const entries: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    const stats = lstatSync(full);
    if (stats.isDirectory()) entries.push(`${prefix}${name}/`, ...snapshot(full, `${prefix}${name}/`));
    else entries.push(`${prefix}${name}=${readFileSync(full, "utf8")}`);
  }
  return entries;
}

function populateOutside(): void {
  rmSync(outside, { recursive: true, force: true });
  mkdirSync(join(outside, "victim-dir"), { recursive: true });
  writeFileSync(join(outside, "victim.txt"), "outside");
  writeFileSync(join(outside, "victim-dir", "inner.txt"), "outside");
  writeFileSync(join(outside, "secret.txt"), "SECRET");
  writeFileSync(join(outside, "only-outside.txt"), "");
}

interface Attack {
  name: string;
  /** Runs the operation; true when its answer shows something of the outside folder. */
  run(): Promise<boolean>;
}

const files = (op: string, body: unknown) => t.post(`/api/files/${op}`, body);
const names = (reply: { body: { files?: { relativePath: string }[] } }) => (reply.body.files ?? []).map((f) => f.relativePath);

const ATTACKS: Attack[] = [
  { name: "delete", run: async () => (await files("delete", { path: "d/victim.txt" }), false) },
  { name: "delete recursive", run: async () => (await files("delete", { path: "d/victim-dir", recursive: true }), false) },
  { name: "mkdir", run: async () => (await files("mkdir", { path: "d/made" }), false) },
  { name: "mkdir recursive", run: async () => (await files("mkdir", { path: "d/made-deep/below", recursive: true }), false) },
  { name: "write", run: async () => (await files("write", { path: "d/written.txt", content: "planted" }), false) },
  {
    name: "upload",
    run: async () => (await fetch(`${t.url}/api/files/stream?path=d/uploaded.txt`, { method: "PUT", body: "planted" }).then((r) => r.text()), false),
  },
  {
    name: "rename out",
    run: async () => {
      writeFileSync(join(t.workspace, "mine.txt"), "planted");
      await files("rename", { oldPath: "mine.txt", newPath: "d/planted.txt" });
      return false;
    },
  },
  { name: "rename in place", run: async () => (await files("rename", { oldPath: "d/victim.txt", newPath: "d/renamed.txt" }), false) },
  {
    name: "move in",
    run: async () => {
      await files("move", { sourcePath: "d/victim.txt", destinationPath: "loot.txt" });
      rmSync(join(t.workspace, "loot.txt"), { force: true });
      return false;
    },
  },
  { name: "read", run: async () => (await files("read", { path: "d/secret.txt" })).body.content === "SECRET" },
  { name: "download", run: async () => (await (await fetch(`${t.url}/api/files/stream?path=d/secret.txt`)).text()) === "SECRET" },
  { name: "exists", run: async () => (await files("exists", { path: "d/only-outside.txt" })).body.exists === true },
  { name: "list", run: async () => names(await files("list", { path: "d" })).includes("only-outside.txt") },
  {
    name: "list recursive",
    run: async () => names(await files("list", { path: ".", recursive: true })).includes("d/only-outside.txt"),
  },
];

const unavailable = bwrapUnavailableReason();

beforeAll(async () => {
  if (unavailable) return;
  outside = mkdtempSync(join(tmpdir(), "sandbox-race-outside-"));
  populateOutside();
  t = await startSandbox({ isolation: "bwrap" });
  const started = await t.post("/api/process/start", { command: "/usr/bin/python3", args: ["-c", SWAPPER, outside] });
  expect(started.status).toBe(200);
  for (let i = 0; i < 200 && !readdirSync(t.workspace).includes("swapping"); i++) await new Promise((r) => setTimeout(r, 25));
});

afterAll(async () => {
  if (unavailable) return;
  await t.close();
  rmSync(outside, { recursive: true, force: true });
});

describe.skipIf(unavailable !== undefined)("a command racing symlinks against the file API", () => {
  // 2,400 calls one after another beside a command that keeps a core busy: on a machine shared with
  // other test runs they take well over the project's default budget.
  it("never makes an operation act outside the workspace", { timeout: 180_000 }, async () => {
    const baseline = snapshot();
    const touched: Record<string, number> = {};
    for (const attack of ATTACKS) {
      touched[attack.name] = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const leaked = await attack.run();
        if (leaked || snapshot().join("\n") !== baseline.join("\n")) {
          touched[attack.name]!++;
          populateOutside();
        }
      }
    }
    // The swapper ran the whole time (the race really happened).
    const swapper = (await t.get("/api/process/list")).body.processes as { status: string }[];
    expect(swapper.map((p) => p.status)).toContain("running");
    expect(touched).toEqual(Object.fromEntries(ATTACKS.map((a) => [a.name, 0])));
  });
});
