/**
 * The Sandbox Durable Object's RPC methods come from their families (src/sandbox/methods.ts), put on
 * the class's prototype. Through the Worker's real binding, every one of them — each method of the
 * RPC list (SANDBOX_RPC_METHODS) and the calls the service makes of a sandbox itself — is offered by
 * Workers RPC and reaches its family's code: called with no arguments, each answers with a result or
 * with an error the object encoded with a wire code (which only the object's own guard does), never
 * with the platform's "does not implement". The object's plumbing, the shell its families are
 * given, is no method of it and is not offered.
 */
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { SANDBOX_RPC_METHODS } from "../../src/rpc/bindings/index.ts";
import { SANDBOX_METHODS } from "../../src/sandbox/methods.ts";
import { uniqueId } from "./helpers.ts";

/** An error thrown by the object itself: `[CODE] message` (src/rpc/rpc-errors.ts). */
const ENCODED = /^\[[A-Z][A-Z_]*\] /;

type Outcome = { answered: unknown } | { threw: unknown };

const id = uniqueId("rpc-methods");
const stub = env.Sandbox.get(env.Sandbox.idFromName(id)) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;

async function callOverRpc(name: string): Promise<Outcome> {
  try {
    const answered = await stub[name]!();
    // A stream that would run on (a watch, the audit trail) is let go at once.
    if (answered instanceof ReadableStream) await answered.cancel();
    return { answered };
  } catch (threw) {
    return { threw };
  }
}

const messageOf = (outcome: Outcome) => ("threw" in outcome ? String((outcome.threw as Error)?.message ?? outcome.threw) : undefined);

afterAll(async () => {
  await (stub.destroy!() as Promise<void>).catch(() => undefined);
});

describe("the Durable Object's RPC methods over a real binding", () => {
  it("has a family method for every method of the RPC list, destroy aside (the class's own: it overrides the base class's)", () => {
    const families = Object.keys(SANDBOX_METHODS);
    expect(SANDBOX_RPC_METHODS.filter((name) => !families.includes(name))).toEqual(["destroy"]);
  });

  it("offers each of them, and each reaches its family", { timeout: 180_000 }, async () => {
    // destroy last, so that the calls before it share one container.
    const names = [...new Set([...SANDBOX_RPC_METHODS, ...Object.keys(SANDBOX_METHODS)])].filter((name) => name !== "destroy").concat("destroy");
    const notReached: Record<string, string> = {};
    for (const name of names) {
      const outcome = await callOverRpc(name);
      const message = messageOf(outcome);
      if (message !== undefined && !ENCODED.test(message)) notReached[name] = message;
    }
    expect(notReached).toEqual({});
  });

  it("offers none of the shell's plumbing, and tells a missing method from a refused call", async () => {
    for (const name of ["call", "guard", "link", "keepingAwake", "updateConfig", "destroyContainer", "noSuchMethod"]) {
      expect(messageOf(await callOverRpc(name)), name).toMatch(/does not implement/);
    }
  });
});
