/**
 * A body whose declared length (Content-Length) is over its route's limit is refused with 413 before
 * any of it arrives: the test's bodies never end, so an answer at all shows nothing waited for them.
 */
import { afterAll, describe, expect, it } from "vitest";
import { FILE_LIMITS } from "../../protocol/files.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { apiCall, sandboxPool } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(sandboxes.destroyAll);

/** A body that sends a few bytes and then nothing, ever (until cancelled). */
function stalledBody(): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sent) {
        sent = true;
        controller.enqueue(new TextEncoder().encode("{"));
        return;
      }
      await new Promise(() => undefined);
    },
  });
}

async function declared(path: string, method: string, length: number): Promise<Response> {
  const answer = apiCall(path, { method, body: stalledBody(), headers: { "content-length": String(length), "content-type": "application/json" }, duplex: "half" } as RequestInit);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${method} ${path}: no answer within 5 s`)), 5_000);
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("a declared length over the route's limit", () => {
  const id = () => sandboxes.create("declared").id;
  const overJson = LIMITS.maxRequestBodyBytes + 1;
  const overUpload = FILE_LIMITS.maxStreamedFileBytes + 1;

  it.each([
    ["POST", (s: string) => `/v1/sandboxes/${s}/exec`, overJson],
    ["POST", (s: string) => `/v1/sandboxes/${s}/processes`, overJson],
    ["POST", (s: string) => `/v1/sandboxes/${s}/processes/p1/stdin`, overJson],
    ["POST", (s: string) => `/v1/sandboxes/${s}/files/write`, overJson],
    ["PUT", (s: string) => `/v1/sandboxes/${s}/files/content?path=x`, overUpload],
    ["PUT", (s: string) => `/v1/sandboxes/${s}/archive`, overUpload],
    ["POST", (s: string) => `/v1/sandbox/${s}/exec`, overJson],
    ["PUT", (s: string) => `/v1/sandbox/${s}/file/x`, overUpload],
    ["POST", (s: string) => `/v1/sandbox/${s}/hydrate`, overUpload],
  ])("%s %s is 413 at once", async (method, path, length) => {
    const response = await declared(path(id()), method, length);
    expect(response.status).toBe(413);
    // Ours say so in the body's httpStatus; the Bridge's shape is {error, code}.
    const body = (await response.json()) as { httpStatus?: number; code?: string };
    expect(body.httpStatus ?? 413).toBe(413);
    expect(body.code).toMatch(/PAYLOAD_TOO_LARGE|payload_too_large/i);
  });
});
