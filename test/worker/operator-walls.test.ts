/**
 * The operator sets the walls; the API caller works inside them. Over /v1 (PATCH /config, /env,
 * /exec) and getSandbox options: the runtime's isolation is a floor, host paths come only from the
 * operator's allowlist, raw bwrap arguments are refused, and a config that could not work — a path
 * that does not exist, a sleepAfter of weeks, a NUL in an env value — is a 4xx when saved, never a
 * sandbox broken later.
 */
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { getSandbox } from "../../src/client/get-sandbox.ts";
import { apiCall as call, sandboxPool, sendToRuntime, uniqueId } from "./helpers.ts";

const sandboxes = sandboxPool();
const made: string[] = [];
afterAll(async () => {
  await sandboxes.destroyAll();
  await Promise.all(made.map((id) => call(`/v1/sandboxes/${id}`, { method: "DELETE" })));
});

function sandboxPath(label: string): { id: string; base: string } {
  const id = uniqueId(label);
  made.push(id);
  return { id, base: `/v1/sandboxes/${id}` };
}

async function patchConfig(base: string, json: unknown): Promise<{ status: number; code?: string; message?: string }> {
  const response = await call(`${base}/config`, { method: "PATCH", json });
  if (response.status === 204) return { status: 204 };
  const body = (await response.json()) as { code: string; message: string };
  return { status: response.status, code: body.code, message: body.message };
}

async function exec(base: string, command: string, extra: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  const response = await call(`${base}/exec`, { method: "POST", json: { command, ...extra } });
  return { status: response.status, body: await response.json() };
}


describe("the runtime's isolation is a floor", () => {
  it("an API caller cannot run a sandbox of a bwrap runtime with none", async () => {
    const { id, base } = sandboxPath("floor");
    // The Worker's runtime (which checks a config as it is saved) has no floor; this sandbox's
    // container comes from one whose floor is bwrap, whose engine checks every create against it.
    await sendToRuntime(id, "bwrapOnly");
    const info = (await (await call(`${base}/info`)).json()) as { isolation: { mode: string } };
    expect(info.isolation.mode).toBe("bwrap");
    const processes = await exec(base, "ls /proc | grep -c '^[0-9][0-9]*$'");
    expect(Number(processes.body.stdout)).toBeLessThan(10);

    // Asked for none: the confined container is stopped and no unconfined one is ever started.
    await expect(getSandbox(env.Sandbox, id, { isolation: "none" }).exec("true")).rejects.toMatchObject({ code: "ISOLATION_NOT_ALLOWED" });
    expect(await exec(base, "true")).toMatchObject({ status: 403, body: { code: "ISOLATION_NOT_ALLOWED", message: expect.stringMatching(/bwrap|isolation/) } });
  });
});

describe("host paths and bwrap arguments", () => {
  const { base } = sandboxPath("walls");

  it("mounts no host path outside the operator's allowlist", async () => {
    for (const json of [
      { isolation: "bwrap", readWritePaths: ["/"] },
      { isolation: "bwrap", readOnlyPaths: ["/etc"] },
      { readWritePaths: ["/tmp"] },
    ]) {
      expect(await patchConfig(base, json), JSON.stringify(json)).toMatchObject({ status: 403, code: "ISOLATION_NOT_ALLOWED" });
    }
    // Nothing was kept: the sandbox still runs as before, and cannot write outside.
    const info = (await (await call(`${base}/info`)).json()) as { isolation: { readWritePaths: string[] } };
    expect(info.isolation.readWritePaths).toEqual([]);
  });

  it("follows symlinks before it decides: a link in an allowed folder to / is refused", async () => {
    const workspace = ((await (await call(`${base}/info`)).json()) as { workspace: string }).workspace;
    await exec(base, "ln -sfn / to-root");
    expect(await patchConfig(base, { isolation: "bwrap", readWritePaths: [`${workspace}/to-root`] })).toMatchObject({
      status: 403,
      code: "ISOLATION_NOT_ALLOWED",
    });
    await exec(base, "mkdir -p shared");
    expect(await patchConfig(base, { isolation: "bwrap", readOnlyPaths: [`${workspace}/shared`] })).toEqual({ status: 204 });
  });

  it("refuses raw bwrap arguments: they are the operator's", async () => {
    const { base: other } = sandboxPath("bwrap-args");
    expect(await patchConfig(other, { isolation: "bwrap", bwrapArgs: ["--ro-bind", "/", "/hostroot"] })).toMatchObject({
      status: 403,
      code: "ISOLATION_NOT_ALLOWED",
    });
    expect((await exec(other, "ls /hostroot 2>/dev/null | wc -l")).body.stdout).toBe("0\n");
    const sandbox = sandboxes.create("bwrap-args-rpc", { isolation: "bwrap", bwrapArgs: ["--bind", "/", "/hostroot"] });
    await expect(sandbox.exec("true")).rejects.toMatchObject({ code: "ISOLATION_NOT_ALLOWED" });
  });
});

describe("a config is checked when it is saved", () => {
  it("refuses a path that does not exist at once (400), not at the next start", async () => {
    const { base } = sandboxPath("missing-path");
    const result = await patchConfig(base, { isolation: "bwrap", readOnlyPaths: ["/no/such/dir"] });
    expect(result).toMatchObject({ status: 400, code: "INVALID_REQUEST", message: expect.stringMatching(/does not exist/) });
    expect((await exec(base, "echo fine")).body).toMatchObject({ exitCode: 0, stdout: "fine\n" });
  });

  it("refuses a sleepAfter beyond 7 days", async () => {
    const { base } = sandboxPath("sleep-after");
    for (const sleepAfter of ["169h", "10081m", 604801, "999999"]) {
      expect(await patchConfig(base, { sleepAfter }), String(sleepAfter)).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    }
    expect(await patchConfig(base, { sleepAfter: "168h" })).toEqual({ status: 204 });
  });

  it("refuses env values with NUL everywhere, and a refused one breaks nothing", async () => {
    const { base } = sandboxPath("nul-env");
    expect(await patchConfig(base, { envVars: { A: "x\u0000y" } })).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    const setEnv = await call(`${base}/env`, { method: "POST", json: { vars: { B: "x\u0000y" } } });
    expect(setEnv.status).toBe(400);
    expect(await setEnv.json()).toMatchObject({ code: "INVALID_REQUEST" });
    expect(await exec(base, "true", { env: { C: "x\u0000y" } })).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
    expect((await exec(base, "echo still fine")).body).toMatchObject({ exitCode: 0, stdout: "still fine\n" });

    const sandbox = sandboxes.create("nul-env-rpc");
    await expect(sandbox.setEnvVars({ D: "x\u0000y" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    expect((await sandbox.exec("echo ok")).stdout).toBe("ok\n");
  });
});

describe("the runtime's limit of live sandboxes", () => {
  it("answers one sandbox too many with 429 TOO_MANY_SANDBOXES while the live one is busy", async () => {
    const first = sandboxPath("limit-a");
    const second = sandboxPath("limit-b");
    await sendToRuntime(first.id, "oneOnly");
    await sendToRuntime(second.id, "oneOnly");
    expect((await exec(first.base, "echo one")).body).toMatchObject({ stdout: "one\n" });
    // Busy: a process runs in it (an idle one would be put to sleep to make room).
    expect((await call(`${first.base}/processes`, { method: "POST", json: { command: "sleep 60", processId: "busy" } })).status).toBeLessThan(300);
    const refused = await exec(second.base, "echo two");
    expect(refused).toMatchObject({ status: 429, body: { code: "TOO_MANY_SANDBOXES", message: expect.stringMatching(/limit/) } });
    expect((await call(first.base, { method: "DELETE" })).status).toBeLessThan(300);
    expect((await exec(second.base, "echo two")).body).toMatchObject({ stdout: "two\n" });
  });
});
