/**
 * What the stack persists is readable by its owner only, attacked as a local user of the machine
 * would (uid 65534, nobody): with an egress secret in a Durable Object's storage and a snapshot in
 * the local R2 bucket, nobody can list the Worker's state, read a Durable Object's SQLite files (its
 * WAL held the secret) or list the bucket; every folder in it is 0700 and every file 0600.
 */
import { spawnSync } from "node:child_process";
import { lstatSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { uniqueId } from "./helpers.ts";

const asRoot = process.getuid?.() === 0;

function asNobody(...argv: string[]): number {
  return spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", ...argv], { stdio: "ignore" }).status ?? -1;
}

function everything(folder: string): { folders: string[]; files: string[] } {
  const found = { folders: [folder], files: [] as string[] };
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      const below = everything(path);
      found.folders.push(...below.folders);
      found.files.push(...below.files);
    } else if (entry.isFile()) found.files.push(path);
  }
  return found;
}

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${inject("stackToken")}`);
  if (init.body !== undefined) headers.set("content-type", "application/json");
  return fetch(`${inject("stackUrl")}/v1/sandboxes${path}`, { ...init, headers });
}

describe.skipIf(!asRoot)("the Worker's state", () => {
  it("holds a secret and a snapshot, and nobody but its owner can list or read any of it", async () => {
    const id = uniqueId("private-state");
    expect((await api(`/${id}/network/secrets/PRIVATE_TOKEN`, { method: "PUT", body: JSON.stringify({ value: "ghp_private" }) })).status).toBeLessThan(300);
    expect((await api(`/${id}/exec`, { method: "POST", body: JSON.stringify({ command: "echo kept > kept.txt" }) })).status).toBe(200);
    expect((await api(`/${id}/backups`, { method: "POST", body: JSON.stringify({}) })).status).toBeLessThan(300);

    const state = join(dirname(inject("stackLog")), "state");
    const { folders, files } = everything(state);
    const objects = files.filter((file) => /\.sqlite(-wal|-shm)?$/.test(file) && file.includes("/do/"));
    const bucket = folders.filter((folder) => folder.includes("/r2/"));
    expect(objects.length).toBeGreaterThan(0);
    expect(bucket.length).toBeGreaterThan(0);
    // SQLite removes a database's -shm and -wal files when it closes it: those gone meanwhile are skipped.
    const still = (path: string) => lstatSync(path, { throwIfNoEntry: false });
    for (const folder of folders) {
      const stat = still(folder);
      if (stat === undefined) continue;
      expect({ folder, mode: (stat.mode & 0o777).toString(8) }).toEqual({ folder, mode: "700" });
      expect(asNobody("ls", folder)).not.toBe(0);
    }
    let checked = 0;
    for (const file of files) {
      const stat = still(file);
      if (stat === undefined) continue;
      expect({ file, groupOrOthers: stat.mode & 0o077 }).toEqual({ file, groupOrOthers: 0 });
      expect(asNobody("cat", file)).not.toBe(0);
      if (objects.includes(file)) checked++;
    }
    expect(checked).toBeGreaterThan(0);
    await api(`/${id}`, { method: "DELETE" });
  });
});
