/**
 * At-most-once runs through the whole chain (HTTP client → proxy → Worker → Durable Object →
 * container): a proxy loses the answer of a call after the request reached the service, the HTTP
 * client sends a call named by an idempotency key (or a process id) again by itself, and the
 * sandbox attaches the retry to the first run instead of running the command twice. A call not
 * named that way is not retried: the caller is told the connection failed.
 */
import { describe, expect, inject, it } from "vitest";
import { getHttpSandbox } from "../../src/client/http.ts";
import { SandboxConnectionError } from "../../src/rpc/errors.ts";
import { startCuttingProxy, type CuttingProxy } from "../cutting-proxy.ts";

const SANDBOX = "at-most-once";

/** A proxy in front of the stack that loses the answer on its first connection as `losing` says. */
async function losingProxy(losing: "at-answer" | number): Promise<CuttingProxy> {
  return startCuttingProxy(inject("stackUrl"), { cutBeforeAnswer: (connection) => (connection === 0 ? losing : undefined) });
}

function sandboxThrough(proxy: CuttingProxy) {
  return getHttpSandbox(SANDBOX, { url: proxy.url, token: inject("stackToken"), retry: { attempts: 3, baseDelayMs: 20 } });
}

/** The sandbox reached directly, to count what ran. */
const direct = () => getHttpSandbox(SANDBOX, { url: inject("stackUrl"), token: inject("stackToken") });
const runsOf = async (file: string) => (await direct().exec(`cat ${file} 2>/dev/null | wc -l`)).stdout.trim();
const counting = (file: string, pause = "0") => `echo run >> ${file}; sleep ${pause}; wc -l < ${file}`;

describe("a call whose answer was lost", () => {
  it("exec with an idempotency key: the client sends it again, and the command ran once", async () => {
    const proxy = await losingProxy("at-answer");
    try {
      const result = await sandboxThrough(proxy).exec(counting("keyed-runs"), { idempotencyKey: "keyed-exec" });
      expect(result).toMatchObject({ success: true, stdout: "1\n" });
      expect(proxy.connections).toBeGreaterThanOrEqual(2);
      expect(await runsOf("keyed-runs")).toBe("1");
    } finally {
      await proxy.close();
    }
  });

  it("exec with an idempotency key, cut while the command still runs: the retry waits for the first run", async () => {
    const proxy = await losingProxy(500);
    try {
      const result = await sandboxThrough(proxy).exec(counting("slow-runs", "2"), { idempotencyKey: "keyed-slow-exec" });
      expect(result).toMatchObject({ success: true, stdout: "1\n" });
      expect(proxy.connections).toBeGreaterThanOrEqual(2);
      expect(await runsOf("slow-runs")).toBe("1");
    } finally {
      await proxy.close();
    }
  });

  it("startProcess with an idempotency key: one process, and the retry answers with it", async () => {
    const proxy = await losingProxy("at-answer");
    try {
      const command = `${counting("start-runs")}; sleep 30`;
      const process = await sandboxThrough(proxy).startProcess(command, { idempotencyKey: "keyed-start" });
      const same = (await direct().listProcesses()).filter((listed) => listed.command === command);
      expect(same.map((listed) => listed.id)).toEqual([process.id]);
      expect(await runsOf("start-runs")).toBe("1");
      await process.kill("SIGKILL");
    } finally {
      await proxy.close();
    }
  });

  it("exec without a key or id is not sent again: the caller is told", async () => {
    const proxy = await losingProxy("at-answer");
    try {
      const failed = await sandboxThrough(proxy)
        .exec(counting("unkeyed-runs"))
        .catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(SandboxConnectionError);
      expect(proxy.connections).toBe(1);
      expect(await runsOf("unkeyed-runs")).toBe("1");
    } finally {
      await proxy.close();
    }
  });
});
