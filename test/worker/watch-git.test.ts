/**
 * Git checkout and file watching through the whole chain, over Workers RPC (getSandbox → Durable
 * Object → container) and over /v1 (getHttpSandbox): a repository made in the sandbox with git and
 * cloned from file://, a watch that sees a write and ends when the caller breaks off, and versions
 * that move with changes.
 */
import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { getHttpSandbox } from "../../src/client/http.ts";
import type { SandboxCommands } from "../../src/client/api.ts";
import type { WatchEvent } from "../../src/rpc/watch.ts";
import { sandboxPool, uniqueId } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(() => sandboxes.destroyAll());

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const workerFetch: typeof fetch = (input, init) => worker.fetch(new Request(input, init));

const transports: [string, () => SandboxCommands][] = [
  ["Workers RPC", () => sandboxes.create("watch-git")],
  ["HTTP", () => getHttpSandbox(uniqueId("watch-git-http"), { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: workerFetch })],
];

describe.each(transports)("over %s", (_name, make) => {
  const sandbox = make();

  it("clones a repository made in the sandbox, at a branch and a depth", async () => {
    const made = await sandbox.exec(
      // In a subshell: the default session stays in the workspace, where the clone lands.
      "(git init -q -b main origin && cd origin && git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m one && " +
        "git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m two && git branch side && pwd)",
    );
    expect(made.exitCode).toBe(0);
    const origin = made.stdout.trim();
    const result = await sandbox.gitCheckout(`file://${origin}`, { branch: "side", depth: 1, targetDir: "copy" });
    expect(result).toMatchObject({ repoUrl: `file://${origin}`, branch: "side", targetDir: expect.stringMatching(/\/copy$/), commit: expect.stringMatching(/^[0-9a-f]{40}$/) });
    expect((await sandbox.exec("git -C copy rev-list --count HEAD")).stdout).toBe("1\n");
    await expect(sandbox.gitCheckout("ext::sh -c id")).rejects.toMatchObject({ code: "INVALID_GIT_URL", httpStatus: 400 });
  });

  it("watches a directory until the caller breaks off", async () => {
    await sandbox.mkdir("watched");
    const seen: WatchEvent[] = [];
    for await (const event of sandbox.watch("watched")) {
      seen.push(event);
      if (event.type === "watching") await sandbox.writeFile("watched/new.txt", "x");
      if (event.type === "change" && event.path === "new.txt") break;
    }
    expect(seen[0]).toMatchObject({ type: "watching", path: expect.stringMatching(/\/watched$/), recursive: true });
    expect(seen.at(-1)).toMatchObject({ type: "change", kind: "create", path: "new.txt", isDirectory: false });
  });

  it("tells whether a tree changed since a version", async () => {
    await sandbox.writeFile("versioned/a.txt", "a");
    const { version } = await sandbox.checkChanges("versioned");
    expect(await sandbox.checkChanges("versioned", { since: version })).toMatchObject({ changed: false, version });
    await sandbox.writeFile("versioned/b.txt", "b");
    expect(await sandbox.checkChanges("versioned", { since: version })).toMatchObject({ changed: true, entries: 2 });
  });
});
