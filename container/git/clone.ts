/**
 * `git clone` into the workspace (or any folder of the sandbox), run by the engine like any command: the sandbox's own git, under
 * its isolation and run tag, in the caller's session (its env) when one is named. git gets its
 * arguments directly, never through a shell, with the URL after `--`; the URL passes
 * repo-url.ts first. The clone's time limit is the engine's: on expiry the clone's whole process
 * group is killed, and what a killed clone left behind is removed.
 */
import { lstat, readdir, rm } from "node:fs/promises";
import { GIT_LIMITS, type GitCloneRequest, type GitCloneResponse } from "../../protocol/git.ts";
import type { ExecResult, SuccessEnvelope } from "../../protocol/process.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { execResultOf } from "../engine/exec.ts";
import { execSpec } from "../engine/options.ts";
import { toFileError } from "../files/errors.ts";
import { locate } from "../files/locate.ts";
import type { ServerContext } from "../http/types.ts";
import { ALLOWED_GIT_PROTOCOLS, checkRepoUrl, repoNameOf } from "./repo-url.ts";

/** The env git runs with on top of the command's: no prompt for credentials (nobody would answer), only the allowed transports. */
const GIT_ENV = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_ALLOW_PROTOCOL: ALLOWED_GIT_PROTOCOLS.join(":"),
};

/** Time a look at the fresh clone's HEAD may take. */
const HEAD_TIMEOUT_MS = 30_000;

export type GitCloneResult = Omit<GitCloneResponse, keyof SuccessEnvelope>;

export async function cloneRepository(server: ServerContext, request: GitCloneRequest): Promise<GitCloneResult> {
  checkRepoUrl(request.repoUrl);
  const target = await prepareTarget(server, request.targetDir ?? repoNameOf(request.repoUrl));
  const args = ["clone", ...(request.depth === undefined ? [] : ["--depth", String(request.depth)])];
  if (request.branch !== undefined) args.push("--branch", request.branch);
  args.push("--", request.repoUrl, target.path);

  const timeoutMs = request.timeoutMs ?? GIT_LIMITS.defaultCloneTimeoutMs;
  const result = await run(server, { args, timeoutMs, sessionId: request.sessionId });
  if (!result.success) {
    // git removes a clone it gave up on itself; one killed on its time limit could not.
    if (result.timedOut && !target.existed) await rm(target.path, { recursive: true, force: true }).catch(() => {});
    const context = { repoUrl: request.repoUrl, exitCode: result.exitCode, stderr: tail(result.stderr) };
    if (result.timedOut) throw new ServiceError("GIT_CLONE_TIMEOUT", `git clone of ${request.repoUrl} took longer than ${timeoutMs} ms and was killed`, { ...context, timeoutMs });
    throw new ServiceError("GIT_CLONE_FAILED", `git clone of ${request.repoUrl} failed: ${lastLine(result.stderr)}`, context);
  }
  const head = await readHead(server, target.path);
  return { repoUrl: request.repoUrl, branch: head.branch === "HEAD" ? (request.branch ?? "HEAD") : head.branch, commit: head.commit, targetDir: target.display, duration: result.duration };
}

interface Target {
  /** The walked path git writes to. */
  path: string;
  /** The path as answers report it. */
  display: string;
  /** It was there (an empty directory) before the clone. */
  existed: boolean;
}

/** The target (relative to the workspace, or anywhere in the sandbox; parents created): missing, or an empty directory, as git needs it. */
async function prepareTarget(server: ServerContext, input: string): Promise<Target> {
  const entry = await locate(server.services.paths, input, "write", { createParents: true });
  try {
    if (entry.isRoot) return await emptyDirectory(entry.dir.at(entry.name), entry.real, entry.display, input);
    let existing;
    try {
      existing = await lstat(entry.dir.at(entry.name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { path: entry.real, display: entry.display, existed: false };
      throw toFileError(error, input);
    }
    if (!existing.isDirectory()) throw new ServiceError("FILE_EXISTS", `${input}: exists and is not a directory`, { path: entry.display });
    return await emptyDirectory(entry.dir.at(entry.name), entry.real, entry.display, input);
  } finally {
    await entry.dir.close();
  }
}

async function emptyDirectory(handlePath: string, real: string, display: string, input: string): Promise<Target> {
  const names = await readdir(handlePath).catch((error: unknown) => {
    throw toFileError(error, input);
  });
  if (names.length > 0) throw new ServiceError("FILE_EXISTS", `${input}: the directory exists and is not empty`, { path: display });
  return { path: real, display, existed: true };
}

/** Runs git to its end: its result (the captured output is let go once read). */
async function run(server: ServerContext, options: { args: string[]; timeoutMs: number; sessionId?: string | undefined; cwd?: string }): Promise<ExecResult> {
  const spec = execSpec(
    {
      command: "git",
      args: options.args,
      env: GIT_ENV,
      timeoutMs: options.timeoutMs,
      ...(options.sessionId === undefined ? { isolated: true } : { sessionId: options.sessionId }),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    },
    server.limits,
    "buffered",
  );
  const record = await server.processes.launch(spec);
  try {
    await record.finished;
    return execResultOf(record);
  } finally {
    record.releaseCapture();
  }
}

/** The commit checked out and its branch ("HEAD" when detached, e.g. a tag). */
async function readHead(server: ServerContext, dir: string): Promise<{ commit: string; branch: string }> {
  const result = await run(server, { args: ["rev-parse", "HEAD", "--abbrev-ref", "HEAD"], timeoutMs: HEAD_TIMEOUT_MS, cwd: dir });
  if (!result.success) throw new ServiceError("GIT_CLONE_FAILED", `the clone in ${dir} has no readable HEAD: ${lastLine(result.stderr)}`, { stderr: tail(result.stderr) });
  const [commit = "", branch = "HEAD"] = result.stdout.trim().split("\n");
  return { commit, branch };
}

function tail(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  return bytes.length <= GIT_LIMITS.stderrTailBytes ? text : bytes.subarray(bytes.length - GIT_LIMITS.stderrTailBytes).toString("utf8");
}

function lastLine(text: string): string {
  return text.trim().split("\n").pop() ?? "";
}
