/**
 * `POST /api/git/clone`: clones of a repository made here with `git init` (through file://, no
 * network), a branch, a shallow depth, the session's env, refused URLs, a clone killed on its
 * time limit together with everything it started, and (under bwrap) git running inside the sandbox.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./helpers.ts";
import { bwrapUnavailableReason, startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let t: SandboxServer;
let repoDir: string;
let repoUrl: string;

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" },
  }).trim();

/** A repository with three commits on `main` and one more on `feature`. */
function makeRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-repo-"));
  git(dir, "init", "-q", "-b", "main");
  for (const n of [1, 2, 3]) {
    writeFileSync(join(dir, "README.md"), `version ${n}\n`);
    git(dir, "add", "README.md");
    git(dir, "commit", "-q", "-m", `commit ${n}`);
  }
  git(dir, "checkout", "-q", "-b", "feature");
  writeFileSync(join(dir, "feature.txt"), "on the branch\n");
  git(dir, "add", "feature.txt");
  git(dir, "commit", "-q", "-m", "feature");
  git(dir, "checkout", "-q", "main");
  return dir;
}

beforeAll(async () => {
  repoDir = makeRepository();
  repoUrl = `file://${repoDir}`;
  t = await startSandbox();
});
afterAll(async () => {
  await t.close();
  rmSync(repoDir, { recursive: true, force: true });
});

const clone = (body: Record<string, unknown>) => t.post("/api/git/clone", body);

describe("git clone", () => {
  it("clones the default branch into a directory named after the repository", async () => {
    const reply = await clone({ repoUrl });
    const name = repoDir.split("/").pop()!;
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, repoUrl, branch: "main", commit: git(repoDir, "rev-parse", "main"), targetDir: join(t.workspace, name) });
    expect(readFileSync(join(t.workspace, name, "README.md"), "utf8")).toBe("version 3\n");
    expect(existsSync(join(t.workspace, name, "feature.txt"))).toBe(false);
  });

  it("checks out a branch into a nested target directory, creating its parents", async () => {
    const reply = await clone({ repoUrl, branch: "feature", targetDir: "src/nested/app" });
    expect(reply.body).toMatchObject({ branch: "feature", commit: git(repoDir, "rev-parse", "feature"), targetDir: join(t.workspace, "src/nested/app") });
    expect(readFileSync(join(t.workspace, "src/nested/app/feature.txt"), "utf8")).toBe("on the branch\n");
  });

  it("makes a shallow clone of the given depth", async () => {
    const reply = await clone({ repoUrl, depth: 1, targetDir: "shallow" });
    expect(reply.status).toBe(200);
    expect(git(join(t.workspace, "shallow"), "rev-list", "--count", "HEAD")).toBe("1");
    const full = await clone({ repoUrl, targetDir: "full" });
    expect(full.status).toBe(200);
    expect(git(join(t.workspace, "full"), "rev-list", "--count", "HEAD")).toBe("3");
  });

  it("fails with GIT_CLONE_FAILED and git's stderr for a branch or repository that is not there", async () => {
    const branch = await clone({ repoUrl, branch: "no-such-branch", targetDir: "missing-branch" });
    expect(branch.status).toBe(422);
    expect(branch.body).toMatchObject({ code: "GIT_CLONE_FAILED", context: { repoUrl, exitCode: 128 } });
    expect(branch.body.context.stderr).toContain("no-such-branch");
    expect(existsSync(join(t.workspace, "missing-branch"))).toBe(false);

    const repo = await clone({ repoUrl: `file://${repoDir}-gone`, targetDir: "missing-repo" });
    expect(repo.body).toMatchObject({ code: "GIT_CLONE_FAILED" });
  });

  it("refuses schemes it does not allow and URLs git would read as options, before running git", async () => {
    for (const repoUrl of ["--upload-pack=touch /tmp/pwned", "-u", "ext::sh -c touch% /tmp/pwned", "git://example.com/repo.git", "ftp://example.com/repo", "ssh://-oProxyCommand=touch/repo", "not a url"]) {
      const reply = await clone({ repoUrl, targetDir: "refused" });
      expect(reply.status, repoUrl).toBe(400);
      expect(reply.body.code, repoUrl).toBe("INVALID_GIT_URL");
    }
    const branch = await clone({ repoUrl, branch: "--upload-pack=touch", targetDir: "refused" });
    expect(branch.body).toMatchObject({ code: "INVALID_REQUEST" });
    expect(existsSync(join(t.workspace, "refused"))).toBe(false);
  });

  it("clones anywhere in the sandbox, and refuses the server's own process or a target that is not empty", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "sandbox-clone-elsewhere-"));
    try {
      const cloned = await clone({ repoUrl, targetDir: join(elsewhere, "checkout") });
      expect(cloned).toMatchObject({ status: 200, body: { targetDir: join(elsewhere, "checkout") } });
      expect(existsSync(join(elsewhere, "checkout", ".git"))).toBe(true);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    expect((await clone({ repoUrl, targetDir: "/proc/self/checkout" })).body).toMatchObject({ code: "PERMISSION_DENIED" });
    mkdirSync(join(t.workspace, "occupied"));
    writeFileSync(join(t.workspace, "occupied", "file"), "x");
    expect((await clone({ repoUrl, targetDir: "occupied" })).body).toMatchObject({ code: "FILE_EXISTS" });
    mkdirSync(join(t.workspace, "empty"));
    expect((await clone({ repoUrl, targetDir: "empty" })).status).toBe(200);
  });

  it("runs in the caller's session: its env reaches git", async () => {
    // git runs GIT_SSH_COMMAND for ssh URLs; the session's one records that it ran and fails.
    const marker = join(t.workspace, "ssh-ran");
    await t.post("/api/session/create", { id: "git-session", env: { GIT_SSH_COMMAND: `sh -c 'echo ran > ${marker}; exit 1' --` } });
    const reply = await clone({ repoUrl: "ssh://git.invalid/repo.git", targetDir: "via-ssh", sessionId: "git-session" });
    expect(reply.body).toMatchObject({ code: "GIT_CLONE_FAILED" });
    expect(readFileSync(marker, "utf8")).toBe("ran\n");
  });

  it("kills the clone and what it started when its time limit runs out (GIT_CLONE_TIMEOUT)", async () => {
    const pidFile = join(t.workspace, "ssh.pid");
    await t.post("/api/session/create", { id: "slow-git", env: { GIT_SSH_COMMAND: `sh -c 'echo $$ > ${pidFile}; exec sleep 1000' --` } });
    const reply = await clone({ repoUrl: "git@git.invalid:team/repo.git", targetDir: "slow", sessionId: "slow-git", timeoutMs: 500 });
    expect(reply.status).toBe(408);
    expect(reply.body).toMatchObject({ code: "GIT_CLONE_TIMEOUT", context: { timeoutMs: 500 } });
    const pid = Number(readFileSync(pidFile, "utf8"));
    const gone = () => {
      try {
        return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.startsWith("Z");
      } catch {
        return true;
      }
    };
    expect(await eventually(gone)).toBe(true);
    expect(existsSync(join(t.workspace, "slow"))).toBe(false);
  });
});

describe.skipIf(bwrapUnavailableReason() !== undefined)("git clone under bwrap", () => {
  let isolated: SandboxServer;
  beforeAll(async () => {
    isolated = await startSandbox({ isolation: "bwrap" });
  });
  afterAll(() => isolated.close());

  it("runs git inside the sandbox: a repository outside it is out of reach, one inside it clones", async () => {
    // The host's temp directory is not the sandbox's /tmp: the clone cannot see the repository there.
    const outside = await isolated.post("/api/git/clone", { repoUrl, targetDir: "from-host" });
    expect(outside.body).toMatchObject({ code: "GIT_CLONE_FAILED" });
    expect(outside.body.context.stderr).toMatch(/does not appear to be a git repository|does not exist/);

    execFileSync("cp", ["-r", repoDir, join(isolated.workspace, "origin")]);
    const inside = await isolated.post("/api/git/clone", { repoUrl: `file://${join(isolated.workspace, "origin")}`, targetDir: "copy" });
    expect(inside.body).toMatchObject({ success: true, branch: "main", targetDir: join(isolated.workspace, "copy") });
  });
});
