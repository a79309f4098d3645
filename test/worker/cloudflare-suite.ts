/**
 * Shared bits of the ported Cloudflare cases (cloudflare-suite-*.test.ts): sandboxes that see the
 * tree Cloudflare's container has (`/workspace` as the default cwd, `/tmp`, the image's programs),
 * which under the local runtime means bwrap isolation, all destroyed at the end of the file.
 */
import type { GetSandboxOptions } from "../../src/client/get-sandbox.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { sandboxPool } from "./helpers.ts";

/** A pool of sandboxes laid out like Cloudflare's container (`afterAll(pool.destroyAll)`). */
export function cloudflareSandboxes(): { create(label: string, options?: GetSandboxOptions): SandboxClient; destroyAll(): Promise<void> } {
  const pool = sandboxPool();
  return {
    create: (label, options) => pool.create(label, { isolation: "bwrap", ...options }),
    destroyAll: () => pool.destroyAll(),
  };
}
