/**
 * Cloudflare's git-clone cases, ported to getSandbox. With no internet here, the repositories are
 * made inside the sandbox with git and cloned from file://: clone errors, a refused clone timeout, and
 * shallow clones at a depth and a branch.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GitCheckoutOptions } from "../../src/client/index.ts";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

const commit = (message: string) => `git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m ${message}`;

describe("git clone", () => {
  const sandbox = sandboxes.create("cf-git");
  const origin = "file:///workspace/origins/spoon-knife";

  beforeAll(async () => {
    const made = await sandbox.exec(
      `mkdir -p /workspace/origins && cd /workspace/origins && git init -q -b main spoon-knife && cd spoon-knife && echo "Hello World" > README && git add README && ${commit("one")} && ${commit("two")} && ${commit("three")}`,
    );
    expect(made.exitCode).toBe(0);
  });

  it("fails to clone a repository that does not exist", async () => {
    await expect(sandbox.gitCheckout("file:///workspace/origins/repository-that-does-not-exist-12345", { targetDir: "/workspace/missing" })).rejects.toThrow(
      /not found|does not exist|repository|fatal/i,
    );
  });

  it("refuses a clone timeout of 0 before cloning", async () => {
    await expect(sandbox.gitCheckout(origin, { cloneTimeoutMs: 0, targetDir: "/workspace/never" } as GitCheckoutOptions)).rejects.toMatchObject({
      httpStatus: expect.any(Number),
      message: expect.stringMatching(/timeout/i),
    });
    expect((await sandbox.exists("/workspace/never")).exists).toBe(false);
  });

  it("clones with depth: 1 (shallow)", async () => {
    const result = await sandbox.gitCheckout(origin, { depth: 1, targetDir: "/workspace/shallow" });
    expect(result).toMatchObject({ branch: "main", targetDir: "/workspace/shallow" });
    expect((await sandbox.exec("git -C /workspace/shallow rev-list --count HEAD")).stdout.trim()).toBe("1");
    expect((await sandbox.exec("git -C /workspace/shallow rev-parse --is-shallow-repository")).stdout.trim()).toBe("true");
  });

  it("clones a branch at depth 1", async () => {
    await sandbox.gitCheckout(origin, { branch: "main", depth: 1, targetDir: "/workspace/shallow-branch" });
    expect((await sandbox.exec("git -C /workspace/shallow-branch rev-parse --is-shallow-repository")).stdout.trim()).toBe("true");
    expect((await sandbox.exec("cd /workspace/shallow-branch && git branch --show-current")).stdout.trim()).toBe("main");
    expect(Number((await sandbox.exec("git -C /workspace/shallow-branch rev-list --count HEAD")).stdout.trim())).toBe(1);
  });

  it("clones into /workspace/<name> without a targetDir", async () => {
    const result = await sandbox.gitCheckout(origin);
    expect(result.targetDir).toBe("/workspace/spoon-knife");
    expect((await sandbox.readFile("/workspace/spoon-knife/README")).content).toContain("Hello");
  });
});
