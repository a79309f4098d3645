import type { StreamUrlClaims } from "../../protocol/stream-url.ts";
import type { Env } from "../env.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";

/** Hono environment of the API: Worker bindings, plus the sandbox a /v1/sandboxes/:id route is about. */
export interface ApiEnv {
  Bindings: Env;
  /** `streamGrant`: what a signed stream URL that let the request in grants (unset for the API token). */
  Variables: { sandbox: SandboxRpc; sandboxId: string; streamGrant?: StreamUrlClaims };
}
