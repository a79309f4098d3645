/**
 * A full disk, for real: the container server runs (as a program, `container/main.ts`) with its
 * workspace on a 256 KiB tmpfs, mounted in a user and mount namespace of its own (`unshare -rm`:
 * no root needed where user namespaces are allowed). Writes that do not fit fail with the kernel's
 * own ENOSPC, which the server answers as 507 INSUFFICIENT_STORAGE, and nothing half-written stays.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARCHIVE_ROUTES } from "../../protocol/archive.ts";
import { FILE_ROUTES } from "../../protocol/files.ts";
import { rawArchive } from "./archive-helpers.ts";
import { call } from "./helpers.ts";

const canUnshare = spawnSync("unshare", ["--user", "--map-root-user", "--mount", "true"]).status === 0;
const MAIN = new URL("../../container/main.ts", import.meta.url).pathname;

let folder: string;
let child: ChildProcess | undefined;
let url: string;

beforeAll(async () => {
  if (!canUnshare) return;
  folder = mkdtempSync(join(tmpdir(), "full-disk-"));
  const script = 'mount -t tmpfs -o size=256k tmpfs "$WORKSPACE" && exec "$0" "$1"';
  child = spawn("unshare", ["--user", "--map-root-user", "--mount", "sh", "-c", script, process.execPath, MAIN], {
    env: { ...process.env, PORT: "0", WORKSPACE: folder, SANDBOX_BUNDLE: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child!.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(out);
      if (found) resolve(found[1]!);
    });
    child!.once("exit", (code) => reject(new Error(`the server exited (${code}): ${out}`)));
  });
});

afterAll(() => {
  child?.kill("SIGTERM");
  if (folder) rmSync(folder, { recursive: true, force: true });
});

const listing = async () => (await call(url, "POST", FILE_ROUTES.list, { path: ".", includeHidden: true })).body.files?.map((f: { name: string }) => f.name).sort();

describe.skipIf(!canUnshare)("a full disk", () => {
  it("an upload that does not fit is 507 INSUFFICIENT_STORAGE, and leaves neither a part nor a change", async () => {
    expect((await call(url, "POST", FILE_ROUTES.write, { path: "kept.txt", content: "before" })).status).toBe(200);
    const before = await listing();
    const upload = await fetch(`${url}${FILE_ROUTES.stream}?path=kept.txt`, { method: "PUT", body: new Uint8Array(1024 * 1024).fill(1) });
    expect(upload.status).toBe(507);
    expect(await upload.json()).toMatchObject({ code: "INSUFFICIENT_STORAGE", httpStatus: 507 });
    const written = await call(url, "POST", FILE_ROUTES.write, { path: "other.bin", content: Buffer.alloc(512 * 1024).toString("base64"), encoding: "base64" });
    expect(written.status).toBe(507);
    expect(written.body.code).toBe("INSUFFICIENT_STORAGE");
    expect(await listing()).toEqual(before);
    expect((await call(url, "POST", FILE_ROUTES.read, { path: "kept.txt" })).body.content).toBe("before");
  });

  it("an archive that does not fit is 507 and restores nothing: the workspace is as it was", async () => {
    const before = await listing();
    const archive = rawArchive([
      { path: "small.txt", type: "File", body: "small" },
      { path: "kept.txt", type: "File", body: "replaced" },
      { path: "huge.bin", type: "File", body: "x".repeat(1024 * 1024) },
    ]);
    const extract = await fetch(`${url}${ARCHIVE_ROUTES.extract}?clear=true`, { method: "PUT", body: new Uint8Array(archive) });
    expect(extract.status).toBe(507);
    expect(await extract.json()).toMatchObject({ code: "INSUFFICIENT_STORAGE" });
    expect(await listing()).toEqual(before);
    expect((await call(url, "POST", FILE_ROUTES.read, { path: "kept.txt" })).body.content).toBe("before");
    expect((await call(url, "GET", "/api/ping")).status).toBe(200);
  });
});
