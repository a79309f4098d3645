/**
 * A full disk that reaches a caller is said as one: the Durable Object's storage failing with
 * SQLITE_FULL, or a file system with ENOSPC, is 507 INSUFFICIENT_STORAGE on every side (across RPC
 * too), never a 500 that reads like a fault of the service; other failures stay INTERNAL_ERROR.
 */
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../protocol/errors.ts";
import { asSandboxError } from "../../src/rpc/errors.ts";
import { fromRpcError, toRpcError } from "../../src/rpc/rpc-errors.ts";

describe("a full disk", () => {
  it.each([
    "SQLITE_FULL: database or disk is full",
    "Error: ENOSPC: no space left on device, write",
    "disk quota exceeded (EDQUOT)",
  ])("%s is INSUFFICIENT_STORAGE, 507, also after crossing RPC", (message) => {
    const coded = asSandboxError(new Error(message));
    expect(coded.code).toBe("INSUFFICIENT_STORAGE");
    expect(ERROR_CODES[coded.code]).toBe(507);
    expect(fromRpcError(toRpcError(new Error(message))).code).toBe("INSUFFICIENT_STORAGE");
  });

  it("while another failure stays INTERNAL_ERROR", () => {
    expect(asSandboxError(new Error("something else broke")).code).toBe("INTERNAL_ERROR");
  });
});
