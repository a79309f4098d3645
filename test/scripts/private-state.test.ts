/**
 * The Worker's persisted state is its owner's only: a state folder wrangler left world-readable
 * (0755 folders, 0644 files, as it writes them) is tightened by `npm start` to 0700 folders and 0600
 * files, and a local user who is not its owner (uid 65534, nobody) can then neither list it nor read
 * a file in it, while the folder above it stays passable for sandboxes.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { privateState } from "../../scripts/private-state.ts";

const asRoot = process.getuid?.() === 0;
const top = mkdtempSync(join(tmpdir(), "private-state-"));
afterAll(() => rmSync(top, { recursive: true, force: true }));

/** Runs a command as nobody; its exit code. */
function asNobody(...argv: string[]): number {
  const result = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", ...argv], { stdio: "ignore" });
  return result.status ?? -1;
}

describe.skipIf(!asRoot)("the Worker's state", () => {
  it("found world-readable, is tightened: nobody can list it or read a file in it", () => {
    chmodSync(top, 0o711);
    const state = join(top, "state");
    const objects = join(state, "v3/do/edge-sandbox-Sandbox");
    const bucket = join(state, "v3/r2/edge-sandbox-backups/blobs");
    mkdirSync(objects, { recursive: true, mode: 0o755 });
    mkdirSync(bucket, { recursive: true, mode: 0o755 });
    const files = [join(objects, "abc.sqlite"), join(objects, "abc.sqlite-wal"), join(bucket, "snapshot-blob")];
    for (const file of files) writeFileSync(file, "egress secret: ghp_123\n", { mode: 0o644 });
    writeFileSync(join(bucket, "tool"), "#!/bin/sh\n", { mode: 0o755 });
    symlinkSync("/etc/hostname", join(state, "link"));
    // Before: what the attack read.
    expect(asNobody("cat", files[1]!)).toBe(0);
    expect(asNobody("ls", bucket)).toBe(0);

    privateState(state);

    for (const folder of [state, join(state, "v3"), objects, bucket]) {
      expect((lstatSync(folder).mode & 0o777).toString(8)).toBe("700");
      expect(asNobody("ls", folder)).not.toBe(0);
    }
    for (const file of files) {
      expect((lstatSync(file).mode & 0o777).toString(8)).toBe("600");
      expect(asNobody("cat", file)).not.toBe(0);
    }
    expect((lstatSync(join(bucket, "tool")).mode & 0o777).toString(8)).toBe("700");
    // A link is no content of its own: left as it is, and what it names untouched.
    expect(readlinkSync(join(state, "link"))).toBe("/etc/hostname");
    expect(lstatSync("/etc/hostname").mode & 0o004).not.toBe(0);
    // The folder above stays passable.
    expect((lstatSync(top).mode & 0o777).toString(8)).toBe("711");
  });

  it("missing, is made 0700", () => {
    const state = join(top, "fresh/state");
    privateState(state);
    expect((lstatSync(state).mode & 0o777).toString(8)).toBe("700");
  });
});
