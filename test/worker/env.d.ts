/**
 * Types of the workers tests: the Worker's bindings as `cloudflare:test` sees them, and what the
 * global setup (global-setup.ts) provides to every test file.
 */
import type { Env as WorkerEnv } from "../../src/env.ts";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {}
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of the local container runtime started by test/worker/global-setup.ts. */
    runtimeUrl: string;
    /** A host folder the main runtime lets sandboxes mount (outside its data folder). */
    sharedDir: string;
    /** A runtime whose container servers find no bubblewrap. */
    noBwrapRuntimeUrl: string;
    /** A runtime whose operator confines every sandbox with bwrap (SANDBOX_ISOLATION=bwrap). */
    bwrapRuntimeUrl: string;
    /** A runtime that runs one sandbox at most (SANDBOX_MAX_SANDBOXES=1). */
    oneSandboxRuntimeUrl: string;
    /** A runtime whose containers start with an empty workspace each time, as on Cloudflare. */
    ephemeralRuntimeUrl: string;
    /** Where a test sends a sandbox's container to another runtime's engine (engine-router.ts): PUT /routes/<object id> with "noBwrap", "bwrapOnly", "oneOnly", "ephemeral", "main" or "none". */
    engineRouterUrl: string;
    /** The runtimes' API as the Worker calls it (SANDBOX_CONTAINER_URL): each sandbox's calls go to its runtime. */
    runtimeApiUrl: string;
    /** A server on loopback standing for the internet, for the Worker's outbound handler (egress-target.ts). */
    egressTargetUrl: string;
    /** The secret both runtimes answer to (the Worker's SANDBOX_RUNTIME_SECRET). */
    runtimeSecret: string;
  }
}
