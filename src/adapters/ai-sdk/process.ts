/**
 * Commands of the AI SDK's sandbox session. `spawn` starts a command on the service's resumable
 * command stream and hands back the contract's process: its stdout and stderr as byte streams (the
 * raw bytes: the command runs with base64 output), `wait()` for its exit code, an idempotent
 * `kill()` of its whole process group, and with `stdin: true` a writable stdin whose close is EOF.
 * Output is pumped from the one ordered stream into the two as it comes; what nobody reads waits in
 * them. `run` is the buffered exec. An aborted signal kills the command; `wait()` then rejects
 * with the signal's reason, as the contract asks.
 */
import type { Experimental_SandboxProcess as SandboxProcess } from "ai";
import type { CommandHandle, SandboxClient } from "../../client/index.ts";
import { base64ToBytes } from "../../rpc/bytes.ts";
import { asHarness, harnessError, hasCode } from "./errors.ts";

export interface CommandOptions {
  command: string;
  workingDirectory?: string;
  env?: Record<string, string>;
  abortSignal?: AbortSignal;
}

export type SpawnedProcess = SandboxProcess & { readonly stdin?: WritableStream<Uint8Array> };

/** Each harness command is its own process in the given directory: isolated from the sandbox's default session. */
function scoped(options: CommandOptions) {
  return {
    isolated: true,
    ...(options.workingDirectory === undefined ? {} : { cwd: options.workingDirectory }),
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.abortSignal === undefined ? {} : { signal: options.abortSignal }),
  };
}

export async function run(client: SandboxClient, options: CommandOptions): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const result = await asHarness(() => client.exec(options.command, scoped(options)));
  return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
}

/** A readable stream fed from outside, whose reader may cancel it (later chunks are then dropped). */
function feed(): { stream: ReadableStream<Uint8Array>; push(bytes: Uint8Array): void; end(error?: unknown): void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    cancel: () => {
      open = false;
    },
  });
  return {
    stream,
    push: (bytes) => {
      if (open && bytes.length > 0) controller.enqueue(bytes);
    },
    end: (error) => {
      if (!open) return;
      open = false;
      if (error === undefined) controller.close();
      else controller.error(error);
    },
  };
}

async function pump(handle: CommandHandle, stdout: ReturnType<typeof feed>, stderr: ReturnType<typeof feed>): Promise<void> {
  try {
    for await (const chunk of handle) (chunk.stream === "stdout" ? stdout : stderr).push(base64ToBytes(chunk.data));
    stdout.end();
    stderr.end();
  } catch (error) {
    const failure = harnessError(error);
    stdout.end(failure);
    stderr.end(failure);
  }
}

function stdinOf(handle: CommandHandle): WritableStream<Uint8Array> {
  return new WritableStream<Uint8Array>({
    write: async (chunk) => {
      await asHarness(() => handle.sendStdin(chunk));
    },
    close: async () => {
      await asHarness(() => handle.closeStdin());
    },
    abort: async () => {
      await handle.closeStdin().catch(() => undefined);
    },
  });
}

export async function spawn(client: SandboxClient, options: CommandOptions & { stdin?: boolean }): Promise<SpawnedProcess> {
  const handle = await asHarness(() => client.run(options.command, { ...scoped(options), wait: false, encoding: "base64", keepStdinOpen: options.stdin === true }));
  const stdout = feed();
  const stderr = feed();
  const pumped = pump(handle, stdout, stderr);
  let killed: Promise<void> | undefined;
  const process: SpawnedProcess = {
    ...(handle.pid === undefined ? {} : { pid: handle.pid }),
    stdout: stdout.stream,
    stderr: stderr.stream,
    async wait() {
      await pumped;
      try {
        return { exitCode: (await handle.result).exitCode };
      } catch (error) {
        if (options.abortSignal?.aborted) throw options.abortSignal.reason;
        throw harnessError(error);
      }
    },
    kill() {
      killed ??= handle.kill().catch((error: unknown) => {
        // Already gone: killing it is done.
        if (!hasCode(error, "PROCESS_NOT_FOUND", "PROCESS_NOT_RUNNING")) throw harnessError(error);
      });
      return killed;
    },
    ...(options.stdin === true ? { stdin: stdinOf(handle) } : {}),
  };
  return process;
}
