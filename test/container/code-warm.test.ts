/**
 * Warm default contexts: the server starts the default contexts of the warm languages (python unless
 * the operator names more) once it has answered its first request and is quiet, unlisted, and the
 * first run without a context takes one that was there before it asked; pings alone (a readiness
 * probe's) start none, so none run beside a new sandbox's first command; a warm context that started
 * before the sandbox's env changed is let go for a fresh one that sees the change.
 */
import { afterEach, describe, expect, it } from "vitest";
import { warmLanguages } from "../../container/interpreter/languages.ts";
import type { CodeContext } from "../../protocol/code.ts";
import { INFO_ROUTES } from "../../protocol/info.ts";
import { mainResult, run, stdoutText } from "./code-helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let sandbox: SandboxServer | undefined;
afterEach(() => sandbox?.close());

const contexts = async (server: SandboxServer) => (await server.get("/api/code/contexts")).body.contexts as CodeContext[];
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("warm default contexts", () => {
  it("are started with the server, unlisted, and taken by the first run of their language", async () => {
    sandbox = await startSandbox({ warmCodeLanguages: ["python", "javascript"] });
    expect(await contexts(sandbox)).toEqual([]);
    await pause(1500);
    const asked = Date.now();
    const python = await run(sandbox, undefined, "import os\nos.getpid()");
    const js = await run(sandbox, undefined, "process.pid", { language: "js" });
    const listed = await contexts(sandbox);
    expect(listed.map((context) => [context.language, context.isDefault]).sort()).toEqual([["javascript", true], ["python", true]]);
    // Both were there before the first run asked for them.
    for (const context of listed) expect(Date.parse(context.createdAt)).toBeLessThan(asked);
    expect(python.executionCount).toBe(1);
    expect(Number(mainResult(js)?.text)).toBeGreaterThan(0);
  });

  it("wait for the first request's answer: pings alone start none", async () => {
    sandbox = await startSandbox({ warmCodeLanguages: ["python"] });
    for (let i = 0; i < 5; i++) {
      expect((await sandbox.get(INFO_ROUTES.ping)).status).toBe(200);
      await pause(150);
    }
    const asked = Date.now();
    await run(sandbox, undefined, "1");
    const [context] = await contexts(sandbox);
    // Started by this run, not readied before it.
    expect(Date.parse(context!.createdAt)).toBeGreaterThanOrEqual(asked - 5);
  });

  it("are let go when the sandbox's env changed after they started", async () => {
    sandbox = await startSandbox();
    await contexts(sandbox); // the first answer: the warm contexts start once quiet after it
    await pause(1000);
    const set = await sandbox.post("/api/env", { vars: { LATE_VAR: "seen" } });
    expect(set.status).toBe(200);
    const execution = await run(sandbox, undefined, "import os\nprint(os.environ.get('LATE_VAR'))");
    expect(stdoutText(execution)).toBe("seen\n");
  });

  it("are the languages the operator names, aliases included, or none", () => {
    expect(warmLanguages(undefined, {})).toEqual(["python"]);
    expect(warmLanguages(undefined, { SANDBOX_WARM_CODE: "py, sh" })).toEqual(["python", "bash"]);
    expect(warmLanguages(undefined, { SANDBOX_WARM_CODE: "none" })).toEqual([]);
    expect(warmLanguages(["typescript"], { SANDBOX_WARM_CODE: "none" })).toEqual(["typescript"]);
  });

  it("start nothing when there are none", async () => {
    sandbox = await startSandbox({ warmCodeLanguages: [] });
    await pause(500);
    const asked = Date.now();
    await run(sandbox, undefined, "1");
    const [context] = await contexts(sandbox);
    expect(Date.parse(context!.createdAt)).toBeGreaterThanOrEqual(asked - 5);
  });
});
