/** The sandbox as a whole, as it crosses Workers RPC and the /v1 API: its settings and what it reports (shapes decided in protocol/). */
import type { z } from "zod";
import type { sandboxConfigSchema } from "../../protocol/sandbox-config.ts";

export type { SandboxDetails, SandboxInfo, SandboxStatus, StartupTiming } from "../../protocol/sandbox-info.ts";

/**
 * Sandbox-wide settings, given to getSandbox() and kept by the Durable Object (protocol/sandbox-config.ts).
 *
 * The isolation fields (`isolation`, `allowNetwork`, `readOnlyPaths`, `readWritePaths`,
 * `allowSystemBinaries`) confine commands under the local container runtime, where no real container
 * wraps them, inside the walls its operator set: the runtime refuses a config below them
 * (ISOLATION_NOT_ALLOWED; `bwrapArgs` always, they are the operator's). On Cloudflare the container
 * itself is the wall and these fields are not used. Changing them while the container runs restarts
 * it (its processes end), so the walls always match.
 */
export type SandboxConfig = z.input<typeof sandboxConfigSchema>;
