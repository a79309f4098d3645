/**
 * The /v1 routes for sessions, env, files (JSON and raw streamed bytes), info and isolation settings,
 * over real HTTP requests to the Worker: status codes, wire codes and bodies.
 */
import { afterAll, describe, expect, it } from "vitest";
import { apiCall as call, patternStream, sha256Hex, uniqueId } from "./helpers.ts";

const made: string[] = [];
function sandboxPath(label: string): string {
  const id = uniqueId(label);
  made.push(id);
  return `/v1/sandboxes/${id}`;
}
afterAll(async () => {
  await Promise.all(made.map((id) => call(`/v1/sandboxes/${id}`, { method: "DELETE" })));
});

async function exec(base: string, command: string, extra: Record<string, unknown> = {}): Promise<{ exitCode: number; stdout: string }> {
  return (await (await call(`${base}/exec`, { method: "POST", json: { command, ...extra } })).json()) as { exitCode: number; stdout: string };
}

describe("sessions over /v1", () => {
  const base = sandboxPath("api-sessions");

  it("create, use, list, get and delete sessions", async () => {
    const created = await call(`${base}/sessions`, { method: "POST", json: { id: "web", env: { A: "1" } } });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ session: { id: "web", env: { A: "1" }, cwd: expect.stringMatching(/\/workspace$/) } });
    expect((await call(`${base}/sessions`, { method: "POST", json: { id: "other" } })).status).toBe(201);

    await exec(base, "mkdir -p sub && cd sub && export B=2", { sessionId: "web" });
    expect((await exec(base, 'basename "$PWD"; echo "$A$B"', { sessionId: "web" })).stdout).toBe("sub\n12\n");
    expect((await exec(base, 'basename "$PWD"; echo "${A:-}${B:-none}"', { sessionId: "other" })).stdout).toBe("workspace\nnone\n");

    const list = (await (await call(`${base}/sessions`)).json()) as { sessions: { id: string }[] };
    expect(list.sessions.map((s) => s.id).sort()).toEqual(["default", "other", "web"]);
    expect(await (await call(`${base}/sessions/web`)).json()).toMatchObject({ session: { id: "web", cwd: expect.stringMatching(/\/sub$/), env: { B: "2" } } });

    await call(`${base}/processes`, { method: "POST", json: { command: "sleep 30", sessionId: "web" } });
    await call(`${base}/processes`, { method: "POST", json: { command: "sleep 30", processId: "outside" } });
    const inWeb = (await (await call(`${base}/processes?sessionId=web`)).json()) as { processes: unknown[] };
    expect(inWeb.processes).toHaveLength(1);
    expect(await (await call(`${base}/sessions/web`, { method: "DELETE" })).json()).toEqual({ sessionId: "web", killed: 1 });
    const gone = await call(`${base}/sessions/web`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect(await (await call(`${base}/processes/outside`)).json()).toMatchObject({ process: { status: "running" } });
    await call(`${base}/processes/outside?signal=KILL`, { method: "DELETE" });

    const duplicate = await call(`${base}/sessions`, { method: "POST", json: { id: "other" } });
    expect(duplicate.status).toBe(409);
    expect(await duplicate.json()).toMatchObject({ code: "SESSION_EXISTS" });
    const bad = await call(`${base}/sessions`, { method: "POST", json: { id: "no spaces" } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: "INVALID_REQUEST" });
  });

  it("sets and unsets env vars for the sandbox or one session", async () => {
    expect((await call(`${base}/env`, { method: "POST", json: { vars: { V: "sandbox" } } })).status).toBe(204);
    expect((await call(`${base}/env`, { method: "POST", json: { vars: { S: "session" }, sessionId: "other" } })).status).toBe(204);
    expect((await exec(base, 'echo "$V ${S:-none}"')).stdout).toBe("sandbox none\n");
    expect((await exec(base, 'echo "$V $S"', { sessionId: "other" })).stdout).toBe("sandbox session\n");
    await call(`${base}/env`, { method: "POST", json: { vars: { V: null } } });
    expect((await exec(base, 'echo "${V:-unset}"')).stdout).toBe("unset\n");
    const bad = await call(`${base}/env`, { method: "POST", json: { vars: { "A=B": "x" } } });
    expect(bad.status).toBe(400);
  });
});

describe("files over /v1", () => {
  const base = sandboxPath("api-files");
  const post = async (op: string, json: unknown) => call(`${base}/files/${op}`, { method: "POST", json });

  it("writes, reads, lists, checks, renames, moves and deletes with JSON", async () => {
    expect(await (await post("write", { path: "docs/a.txt", content: "alpha" })).json()).toMatchObject({ bytesWritten: 5 });
    expect((await post("mkdir", { path: "docs/sub/deeper", recursive: true })).status).toBe(200);
    expect(await (await post("read", { path: "docs/a.txt" })).json()).toMatchObject({ content: "alpha", encoding: "utf8", size: 5, mimeType: "text/plain", isBinary: false });
    await post("write", { path: "docs/b.bin", content: btoa("\u0000\u0001\u00ff"), encoding: "base64" });
    expect(await (await post("read", { path: "docs/b.bin" })).json()).toMatchObject({ content: btoa("\u0000\u0001\u00ff"), encoding: "base64", isBinary: true });

    const listing = (await (await post("list", { path: "docs", recursive: true })).json()) as { files: { relativePath: string; type: string }[]; count: number };
    expect(listing.files.map((f) => f.relativePath).sort()).toEqual(["a.txt", "b.bin", "sub", "sub/deeper"]);
    expect(await (await post("exists", { path: "docs/sub" })).json()).toMatchObject({ exists: true, type: "directory" });

    expect(await (await post("rename", { oldPath: "docs/a.txt", newPath: "docs/c.txt" })).json()).toMatchObject({ newPath: expect.stringMatching(/c\.txt$/) });
    expect((await post("move", { sourcePath: "docs/c.txt", destinationPath: "docs/sub" })).status).toBe(200);
    expect((await exec(base, "cat docs/sub/c.txt")).stdout).toBe("alpha");
    expect((await post("delete", { path: "docs", recursive: true })).status).toBe(200);
    expect(await (await post("exists", { path: "docs" })).json()).toMatchObject({ exists: false });
  });

  it("streams raw bytes both ways at /files/content, with the file's headers", async () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const put = await call(`${base}/files/content?path=raw/all.bin`, { method: "PUT", body: bytes });
    expect(await put.json()).toMatchObject({ bytesWritten: 256 });
    const got = await call(`${base}/files/content?path=raw/all.bin`);
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("application/octet-stream");
    expect(got.headers.get("content-length")).toBe("256");
    expect(got.headers.get("x-file-size")).toBe("256");
    expect(got.headers.get("x-file-binary")).toBe("true");
    expect(decodeURIComponent(got.headers.get("x-file-path")!)).toMatch(/\/raw\/all\.bin$/);
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(bytes);

    await call(`${base}/files/content?path=raw/page.html&mode=640`, { method: "PUT", body: "<p>hi</p>" });
    const page = await call(`${base}/files/content?path=raw/page.html`);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toBe("<p>hi</p>");
    expect((await exec(base, "stat -c %a raw/page.html")).stdout).toBe("640\n");
  });

  it("takes uploads beyond the JSON body limit, streamed with and without a length", async () => {
    const size = 20 * 1024 * 1024;
    const expected = await sha256Hex(patternStream(size));
    const streamed = await call(`${base}/files/content?path=big/streamed.bin`, { method: "PUT", body: patternStream(size), duplex: "half" } as RequestInit);
    expect(streamed.status).toBe(200);
    expect(await streamed.json()).toMatchObject({ bytesWritten: size });
    expect((await exec(base, "sha256sum big/streamed.bin")).stdout.split(" ")[0]).toBe(expected.hex);

    // A declared length over the 16 MiB JSON limit is fine here.
    const sized = await call(`${base}/files/content?path=big/sized.bin`, { method: "PUT", body: new Uint8Array(17 * 1024 * 1024) });
    expect(await sized.json()).toMatchObject({ bytesWritten: 17 * 1024 * 1024 });

    const download = await call(`${base}/files/content?path=big/streamed.bin`);
    expect(download.headers.get("content-length")).toBe(String(size));
    expect(await sha256Hex(download.body!)).toEqual({ hex: expected.hex, bytes: size });
    // The JSON routes keep their limit.
    const tooBig = await post("write", { path: "big/json.txt", content: "x".repeat(17 * 1024 * 1024) });
    expect(tooBig.status).toBe(413);
  });

  it("answers the server's own process with 403 PERMISSION_DENIED and missing files with 404 FILE_NOT_FOUND", async () => {
    const refused = [
      await call(`${base}/files/content?path=${encodeURIComponent("/proc/self/environ")}`),
      await call(`${base}/files/content?path=${encodeURIComponent("/dev/fd/0")}`, { method: "PUT", body: "x" }),
      await post("read", { path: "/proc/self/mem" }),
      await post("write", { path: "/proc/self/comm", content: "x" }),
      await post("list", { path: "/proc/self/fd" }),
    ];
    for (const response of refused) {
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ success: false, code: "PERMISSION_DENIED", httpStatus: 403 });
    }
    // Anywhere else is the sandbox's: here (no isolation) the machine's files, as its commands see them.
    expect(await (await call(`${base}/files/content?path=${encodeURIComponent("/etc/hostname")}`)).text()).toBe((await exec(base, "cat /etc/hostname")).stdout);
    for (const response of [await call(`${base}/files/content?path=nope.txt`), await post("read", { path: "nope.txt" }), await post("delete", { path: "nope.txt" })]) {
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: "FILE_NOT_FOUND" });
    }
    const noPath = await call(`${base}/files/content`);
    expect(noPath.status).toBe(400);
    expect(await noPath.json()).toMatchObject({ code: "INVALID_REQUEST" });
  });
});

describe("info and settings over /v1", () => {
  const base = sandboxPath("api-info");

  it("reports info, instructions and isolation support", async () => {
    const info = await call(`${base}/info`);
    expect(info.status).toBe(200);
    const body = (await info.json()) as { id: string; status: string; resources: { cpus: number }; isolation: { mode: string } };
    expect(body).toMatchObject({ id: base.split("/").at(-1), status: "ok", isolation: { mode: "none" } });
    expect(body.resources.cpus).toBeGreaterThanOrEqual(1);
    expect(await (await call(`${base}/instructions`)).json()).toMatchObject({ instructions: expect.stringContaining("sandbox") });
    expect(await (await call(`${base}/isolation`)).json()).toMatchObject({ none: { available: true }, bwrap: { available: true } });
  });

  it("takes isolation settings in PATCH /config, validated", async () => {
    expect((await call(`${base}/config`, { method: "PATCH", json: { isolation: "bwrap", allowNetwork: false } })).status).toBe(204);
    expect(await (await call(`${base}/info`)).json()).toMatchObject({ isolation: { mode: "bwrap", allowNetwork: false } });
    for (const json of [{ isolation: "docker" }, { readOnlyPaths: ["relative/path"] }, { allowNetwork: "yes" }, { unknown: true }]) {
      const response = await call(`${base}/config`, { method: "PATCH", json });
      expect(response.status, JSON.stringify(json)).toBe(400);
      expect(await response.json()).toMatchObject({ code: "INVALID_REQUEST" });
    }
  });
});
