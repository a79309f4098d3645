/**
 * The container state `@cloudflare/containers` keeps in storage is written unconfirmed
 * (src/sandbox/container-state-writes.ts), through the package's state keeper, which its types call
 * private. An upgrade of the package that renames or drops that keeper would leave the writes as
 * they were, gated, with nothing failing: this test fails instead. It also holds that the state is
 * still written, and read back as the package wrote it.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterAll, describe, expect, it } from "vitest";
import { sandboxPool } from "./helpers.ts";

/** The package's storage key for its container's state. */
const CONTAINER_STATE_KEY = "__CF_CONTAINER_STATE";

const pool = sandboxPool();
afterAll(pool.destroyAll);

describe("the container state the package keeps", () => {
  it("is written through our unconfirmed storage, and still written", async () => {
    const sandbox = pool.create("state-writes");
    expect((await sandbox.exec("echo up")).stdout).toBe("up\n");
    const seen = await runInDurableObject(env.Sandbox.get(env.Sandbox.idFromName(sandbox.id)), async (instance, state) => {
      const keeper = (instance as unknown as { state?: { storage?: unknown } }).state;
      return {
        keeperFound: keeper?.storage !== undefined,
        keeperStorageIsTheObjects: keeper?.storage === state.storage,
        stored: await state.storage.get<{ status?: string }>(CONTAINER_STATE_KEY),
      };
    });
    expect(seen).toMatchObject({ keeperFound: true, keeperStorageIsTheObjects: false, stored: { status: "healthy" } });
  });
});
