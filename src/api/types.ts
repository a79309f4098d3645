import type { Env } from "../env.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";

/** Hono environment of the API: Worker bindings, plus the sandbox a /v1/sandboxes/:id route is about. */
export interface ApiEnv {
  Bindings: Env;
  Variables: { sandbox: SandboxRpc; sandboxId: string };
}
