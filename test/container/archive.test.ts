/**
 * Workspace archives on the container server: a round trip keeps text, binary, symbolic links (as
 * links, absolute and relative targets alike), the executable bit and empty folders; listed paths
 * only; wildcard patterns and git's ignores left out; a clearing extract leaves exactly the archive; and hostile archives (`..`, absolute paths,
 * writing through a link in the archive or one already on disk, hard links out) write nothing
 * outside the workspace and are refused with INVALID_ARCHIVE.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARCHIVE_ROUTES } from "../../protocol/archive.ts";
import { rawArchive } from "./archive-helpers.ts";
import { call, startTestServer, type TestServer } from "./helpers.ts";

let source: TestServer;
let target: TestServer;
let outside: string;

beforeAll(async () => {
  [source, target] = await Promise.all([startTestServer(), startTestServer()]);
  outside = mkdtempSync(join(tmpdir(), "archive-outside-"));
});

afterAll(async () => {
  await Promise.all([source.close(), target.close()]);
  rmSync(outside, { recursive: true, force: true });
});

async function archiveOf(server: TestServer, paths?: string[]): Promise<Buffer> {
  const response = await fetch(server.url + ARCHIVE_ROUTES.create, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(paths === undefined ? {} : { paths }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/gzip");
  return Buffer.from(await response.arrayBuffer());
}

async function extract(server: TestServer, archive: Buffer, query = ""): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${ARCHIVE_ROUTES.extract}${query}`, { method: "PUT", body: new Uint8Array(archive) });
  return { status: response.status, body: await response.json() };
}

function emptyDir(dir: string): void {
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
}

describe("archive round trip", () => {
  const binary = randomBytes(300_000);

  beforeAll(() => {
    const ws = source.workspace;
    mkdirSync(join(ws, "src/deep"), { recursive: true });
    writeFileSync(join(ws, "src/hello.txt"), "héllo wörld\n");
    writeFileSync(join(ws, "src/deep/data.bin"), binary);
    writeFileSync(join(ws, "run.sh"), "#!/bin/sh\necho ran\n");
    chmodSync(join(ws, "run.sh"), 0o755);
    mkdirSync(join(ws, "empty/nested-empty"), { recursive: true });
    symlinkSync("src/hello.txt", join(ws, "link-relative"));
    symlinkSync(outside, join(ws, "link-absolute-out"));
    symlinkSync("../../nowhere", join(ws, "src/dangling"));
  });

  it("restores text, binary, links as links, the executable bit and empty folders", async () => {
    const archive = await archiveOf(source);
    emptyDir(target.workspace);
    const { status, body } = await extract(target, archive);
    expect(status).toBe(200);
    expect(body.entries).toBeGreaterThanOrEqual(10);
    expect(body.bytes).toBe(archive.length);
    const ws = target.workspace;
    expect(readFileSync(join(ws, "src/hello.txt"), "utf8")).toBe("héllo wörld\n");
    expect(readFileSync(join(ws, "src/deep/data.bin")).equals(binary)).toBe(true);
    expect(statSync(join(ws, "run.sh")).mode & 0o777).toBe(0o755);
    expect(statSync(join(ws, "src/hello.txt")).mode & 0o111).toBe(0);
    expect(readdirSync(join(ws, "empty"))).toEqual(["nested-empty"]);
    expect(readdirSync(join(ws, "empty/nested-empty"))).toEqual([]);
    expect(lstatSync(join(ws, "link-relative")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(ws, "link-relative"))).toBe("src/hello.txt");
    expect(readlinkSync(join(ws, "link-absolute-out"))).toBe(outside);
    expect(readlinkSync(join(ws, "src/dangling"))).toBe("../../nowhere");
  });

  it("archives only the listed paths", async () => {
    const archive = await archiveOf(source, ["src/deep", "run.sh"]);
    emptyDir(target.workspace);
    expect((await extract(target, archive)).status).toBe(200);
    expect(readdirSync(target.workspace).sort()).toEqual(["run.sh", "src"]);
    expect(readdirSync(join(target.workspace, "src"))).toEqual(["deep"]);
  });

  it("a clearing extract leaves exactly the archive's paths, and nothing else of them", async () => {
    const archive = await archiveOf(source, ["src"]);
    writeFileSync(join(target.workspace, "kept.txt"), "not in the cleared path");
    mkdirSync(join(target.workspace, "src"), { recursive: true });
    writeFileSync(join(target.workspace, "src/stale.txt"), "cleared away");
    expect((await extract(target, archive, "?clear=true&path=src")).status).toBe(200);
    expect(existsSync(join(target.workspace, "src/stale.txt"))).toBe(false);
    expect(existsSync(join(target.workspace, "src/hello.txt"))).toBe(true);
    expect(readFileSync(join(target.workspace, "kept.txt"), "utf8")).toBe("not in the cleared path");
  });

  it("leaves excluded paths out, and makes a plain tar when asked, which extraction takes too", async () => {
    const response = await fetch(source.url + ARCHIVE_ROUTES.create, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ format: "tar", exclude: ["src/deep", "run.sh"] }),
    });
    expect(response.headers.get("content-type")).toBe("application/x-tar");
    const archive = Buffer.from(await response.arrayBuffer());
    expect(archive.subarray(257, 262).toString()).toBe("ustar");
    emptyDir(target.workspace);
    expect((await extract(target, archive)).status).toBe(200);
    expect(existsSync(join(target.workspace, "src/hello.txt"))).toBe(true);
    expect(existsSync(join(target.workspace, "src/deep"))).toBe(false);
    expect(existsSync(join(target.workspace, "run.sh"))).toBe(false);
  });

  it("refuses paths outside the workspace, missing paths, and bodies that are no archive", async () => {
    expect((await call(source.url, "POST", ARCHIVE_ROUTES.create, { paths: ["../x"] })).body.code).toBe("INVALID_REQUEST");
    expect((await call(source.url, "POST", ARCHIVE_ROUTES.create, { paths: ["/etc"] })).body.code).toBe("INVALID_REQUEST");
    expect((await call(source.url, "POST", ARCHIVE_ROUTES.create, { paths: ["no-such"] })).body.code).toBe("FILE_NOT_FOUND");
    // Through a link that leads out: the archive would read outside.
    expect((await call(source.url, "POST", ARCHIVE_ROUTES.create, { paths: ["link-absolute-out/x"] })).body.code).toBe("PATH_OUTSIDE_WORKSPACE");
    const notArchive = await extract(target, Buffer.from("plain text, not gzip"));
    expect(notArchive.status).toBe(400);
    expect(notArchive.body.code).toBe("INVALID_ARCHIVE");
  });
});

describe("archives of a folder anywhere in the sandbox", () => {
  it("packs and extracts `dir` outside the workspace, and refuses the server's own process", async () => {
    const outside = mkdtempSync(join(tmpdir(), "sandbox-archive-dir-"));
    try {
      mkdirSync(join(outside, "from/sub"), { recursive: true });
      writeFileSync(join(outside, "from/sub/a.txt"), "outside");
      writeFileSync(join(outside, "from/b.txt"), "b");
      const response = await fetch(source.url + ARCHIVE_ROUTES.create, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ dir: join(outside, "from") }),
      });
      expect(response.status).toBe(200);
      const archive = Buffer.from(await response.arrayBuffer());
      // Into a folder that is not there yet: it is made.
      expect(await extract(target, archive, `?dir=${encodeURIComponent(join(outside, "to/deeper"))}`)).toMatchObject({ status: 200 });
      expect(readFileSync(join(outside, "to/deeper/sub/a.txt"), "utf8")).toBe("outside");
      expect(readFileSync(join(outside, "to/deeper/b.txt"), "utf8")).toBe("b");
      // Relative to the workspace, as file paths are.
      expect(await extract(target, archive, "?dir=unpacked")).toMatchObject({ status: 200 });
      expect(readFileSync(join(target.workspace, "unpacked/sub/a.txt"), "utf8")).toBe("outside");
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
    for (const dir of ["/proc/self", "/dev/fd"]) {
      expect((await call(source.url, "POST", ARCHIVE_ROUTES.create, { dir })).body.code, dir).toBe("PERMISSION_DENIED");
      expect((await extract(target, rawArchive([{ path: "x", type: "File", body: "x" }]), `?dir=${encodeURIComponent(dir)}`)).body.code, dir).toBe("PERMISSION_DENIED");
    }
  });
});

describe("leaving out by pattern and by git", () => {
  it("`excludes` leave out a name at any depth or a path; `gitignore` what git ignores in the folder", async () => {
    const outside = mkdtempSync(join(tmpdir(), "sandbox-archive-ignoring-"));
    try {
      const project = join(outside, "project");
      for (const dir of ["node_modules/pkg", "src/node_modules", "build", "cache/tmp"]) mkdirSync(join(project, dir), { recursive: true });
      for (const [path, text] of Object.entries({ "node_modules/pkg/i.js": "x", "src/node_modules/y.js": "y", "src/app.ts": "app", "src/debug.log": "log", "cache/tmp/t": "t", "cache/keep": "k", "build/out.js": "built", ".gitignore": "build/\n" })) {
        writeFileSync(join(project, path), text);
      }
      execFileSync("git", ["init", "-q", project]);
      const names = async (request: object): Promise<string[]> => {
        const response = await fetch(source.url + ARCHIVE_ROUTES.create, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ dir: project, ...request }) });
        expect(response.status).toBe(200);
        const into = join(outside, `out-${randomBytes(4).toString("hex")}`);
        expect(await extract(target, Buffer.from(await response.arrayBuffer()), `?dir=${encodeURIComponent(into)}`)).toMatchObject({ status: 200 });
        const found: string[] = [];
        const walk = (relative: string): void => {
          for (const name of readdirSync(join(into, relative))) {
            const path = relative === "" ? name : `${relative}/${name}`;
            if (path === ".git") continue;
            found.push(path);
            if (lstatSync(join(into, path)).isDirectory()) walk(path);
          }
        };
        walk("");
        return found.sort();
      };
      expect(await names({ excludes: ["node_modules", "*.log", "cache/tmp"], gitignore: true })).toEqual([".gitignore", "cache", "cache/keep", "src", "src/app.ts"]);
      expect(await names({ excludes: ["*.log"] })).toContain("build/out.js");
      expect(await names({ gitignore: true, paths: ["src"] })).toEqual(["src", "src/app.ts", "src/debug.log", "src/node_modules", "src/node_modules/y.js"]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
    expect((await call(source.url, "POST", ARCHIVE_ROUTES.create, { gitignore: "yes" })).body.code).toBe("INVALID_REQUEST");
  });
});

describe("hostile archives", () => {
  function outsideNames(): string[] {
    return readdirSync(outside);
  }

  it.each([
    ["a .. path", [{ path: "../escaped.txt", type: "File" as const, body: "x" }]],
    ["a deeper .. path", [{ path: "a/../../escaped.txt", type: "File" as const, body: "x" }]],
    ["an absolute path", [{ path: `${"/tmp"}/escaped-absolute.txt`, type: "File" as const, body: "x" }]],
    ["a hard link out by ..", [{ path: "hard", type: "Link" as const, linkpath: "../escaped-target" }]],
  ])("%s is refused with INVALID_ARCHIVE", async (_label, entries) => {
    emptyDir(target.workspace);
    const before = outsideNames();
    const { status, body } = await extract(target, rawArchive(entries));
    expect(status).toBe(400);
    expect(body.code).toBe("INVALID_ARCHIVE");
    expect(outsideNames()).toEqual(before);
    expect(existsSync(join(target.workspace, "..", "escaped.txt"))).toBe(false);
    expect(existsSync("/tmp/escaped-absolute.txt")).toBe(false);
  });

  it("a link in the archive to outside, then a file through it: the file stays inside, the link is made last", async () => {
    emptyDir(target.workspace);
    const archive = rawArchive([
      { path: "evil", type: "SymbolicLink", linkpath: outside },
      { path: "evil/pwned.txt", type: "File", body: "through the link" },
    ]);
    await extract(target, archive);
    expect(outsideNames()).not.toContain("pwned.txt");
    expect(existsSync(join(outside, "pwned.txt"))).toBe(false);
  });

  it("a link already in the workspace leading out cannot be written through: the archive's folder takes its place", async () => {
    emptyDir(target.workspace);
    symlinkSync(outside, join(target.workspace, "out"));
    const { status } = await extract(target, rawArchive([{ path: "out/pwned.txt", type: "File", body: "through the old link" }]));
    expect(status).toBe(200);
    expect(existsSync(join(outside, "pwned.txt"))).toBe(false);
    expect(lstatSync(join(target.workspace, "out")).isDirectory()).toBe(true);
    expect(readFileSync(join(target.workspace, "out/pwned.txt"), "utf8")).toBe("through the old link");
  });

  it("a hard link through a link already in the workspace is refused", async () => {
    emptyDir(target.workspace);
    writeFileSync(join(outside, "secret.txt"), "secret");
    symlinkSync(outside, join(target.workspace, "out"));
    const { body } = await extract(target, rawArchive([{ path: "hard", type: "Link", linkpath: "out/secret.txt" }]));
    expect(body.code).toBe("INVALID_ARCHIVE");
    expect(existsSync(join(target.workspace, "hard"))).toBe(false);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret");
  });

  it("a link whose own place climbs out by .. is refused", async () => {
    emptyDir(target.workspace);
    const { body } = await extract(target, rawArchive([{ path: "../escaped-link", type: "SymbolicLink", linkpath: "/etc" }]));
    expect(body.code).toBe("INVALID_ARCHIVE");
    expect(existsSync(join(target.workspace, "..", "escaped-link"))).toBe(false);
  });

  it("setuid and setgid bits are dropped", async () => {
    emptyDir(target.workspace);
    await extract(target, rawArchive([{ path: "suid", type: "File", body: "x", mode: 0o6755 }]));
    expect(statSync(join(target.workspace, "suid")).mode & 0o7777).toBe(0o755);
  });
});

/** Every entry under `dir` with its kind, mode and content (or link target): equal trees, byte for byte. */
function treeOf(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, prefix)).sort()) {
    const relative = prefix === "" ? name : `${prefix}/${name}`;
    const found = lstatSync(join(dir, relative));
    const mode = (found.mode & 0o7777).toString(8);
    if (found.isSymbolicLink()) out.push(`${relative} -> ${readlinkSync(join(dir, relative))}`);
    else if (found.isDirectory()) out.push(`${relative}/ ${mode}`, ...treeOf(dir, relative));
    else out.push(`${relative} ${mode} ${readFileSync(join(dir, relative)).toString("base64")}`);
  }
  return out;
}

describe("restores are all or nothing", () => {
  let small: TestServer;
  beforeAll(async () => {
    small = await startTestServer({ maxExtractedBytes: 1024 * 1024, maxExtractedEntries: 50 });
  });
  afterAll(() => small.close());

  function seed(ws: string): string[] {
    emptyDir(ws);
    mkdirSync(join(ws, "src/deep"), { recursive: true });
    writeFileSync(join(ws, "src/a.txt"), "the old a\n");
    writeFileSync(join(ws, "src/deep/b.bin"), randomBytes(70_000));
    writeFileSync(join(ws, "top.txt"), "top\n");
    symlinkSync("src/a.txt", join(ws, "link"));
    chmodSync(join(ws, "top.txt"), 0o750);
    return treeOf(ws);
  }

  const goodThenBad = rawArchive([
    { path: "src/a.txt", type: "File", body: "the new a, which must not land\n" },
    { path: "src/deep/b.bin", type: "File", body: "short" },
    { path: "fresh.txt", type: "File", body: "new" },
    { path: "../escape.txt", type: "File", body: "refused" },
  ]);

  it.each([
    ["a refused entry after good ones", goodThenBad, "", 400, "INVALID_ARCHIVE"],
    ["the same, clearing the workspace first", goodThenBad, "?clear=true", 400, "INVALID_ARCHIVE"],
    ["an archive cut midway", goodThenBad.subarray(0, Math.floor(goodThenBad.length / 2)), "?clear=true", 400, "INVALID_ARCHIVE"],
  ])("%s leaves the workspace as it was, byte for byte", async (_label, archive, query, status, code) => {
    const before = seed(target.workspace);
    const answer = await extract(target, archive, query);
    expect(answer.status).toBe(status);
    expect(answer.body.code).toBe(code);
    expect(treeOf(target.workspace)).toEqual(before);
  });

  it("a gzip bomb (a small archive of a large file) stops at the extraction limit: 413, nothing written", async () => {
    const before = seed(small.workspace);
    const bomb = rawArchive([
      { path: "src/a.txt", type: "File", body: "replaced?" },
      { path: "zeros.bin", type: "File", body: "\0".repeat(8 * 1024 * 1024) },
    ]);
    expect(bomb.length).toBeLessThan(64 * 1024);
    const answer = await extract(small, bomb, "?clear=true");
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: "PAYLOAD_TOO_LARGE", context: { maxBytes: 1024 * 1024 } });
    expect(treeOf(small.workspace)).toEqual(before);
  });

  it("so does an archive of too many entries", async () => {
    const before = seed(small.workspace);
    const many = rawArchive(Array.from({ length: 60 }, (_, i) => ({ path: `f${i}`, type: "File" as const, body: "x" })));
    const answer = await extract(small, many);
    expect(answer.status).toBe(413);
    expect(treeOf(small.workspace)).toEqual(before);
  });

  it("a good restore replaces whole what it clears and merges the rest; no staging folder is left or archived", async () => {
    seed(target.workspace);
    const archive = rawArchive([
      { path: "src", type: "Directory" },
      { path: "src/new.txt", type: "File", body: "new" },
      { path: "top.txt", type: "File", body: "new top" },
    ]);
    expect((await extract(target, archive, "?clear=true&path=src")).status).toBe(200);
    expect(readdirSync(join(target.workspace, "src"))).toEqual(["new.txt"]);
    expect(readFileSync(join(target.workspace, "top.txt"), "utf8")).toBe("new top");
    expect(readlinkSync(join(target.workspace, "link"))).toBe("src/a.txt");
    expect(readdirSync(target.workspace).filter((name) => name.startsWith(".sandbox-restore-"))).toEqual([]);
  });
});

