/** The sandbox as a whole over /v1: its state, what it reports, its settings, destroying it (../sandbox.ts has their shapes). */
import { destroyQuerySchema } from "../../../protocol/backups.ts";
import { instructionsSchema } from "../../../protocol/info.ts";
import { isolationSupportSchema } from "../../../protocol/isolation.ts";
import { sandboxConfigRequestSchema } from "../../../protocol/sandbox-config.ts";
import { sandboxDetailsSchema, sandboxIdentitySchema, sandboxInfoSchema, sandboxStatusSchema } from "../../../protocol/sandbox-info.ts";
import type { Binding } from "./binding.ts";

export const lifecycleBindings = {
  info: {
    verb: "GET",
    path: "/",
    args: [],
    response: sandboxInfoSchema.extend(sandboxIdentitySchema.shape),
    summary: "Sandbox state (starts its container if needed)",
    described: "Sandbox",
    // The answer adds the sandbox's id, which the route knows and the Durable Object does not say.
    byHand: ["route"],
  },
  status: {
    verb: "GET",
    path: "/status",
    args: [],
    response: sandboxStatusSchema,
    summary: "Whether the sandbox's container runs now (asked without starting it, unlike every other route)",
    described: "Status",
  },
  getInfo: {
    verb: "GET",
    path: "/info",
    args: [],
    response: sandboxDetailsSchema.extend(sandboxIdentitySchema.shape),
    summary: "Status, resources and isolation of the sandbox's container",
    described: "Info",
    // The answer adds the sandbox's id.
    byHand: ["route"],
  },
  getInstructions: {
    verb: "GET",
    path: "/instructions",
    args: [],
    response: instructionsSchema,
    key: "instructions",
    summary: "A short description of the sandbox for an agent's tool prompt",
    described: "Instructions",
  },
  detectIsolation: {
    verb: "GET",
    path: "/isolation",
    args: [],
    response: isolationSupportSchema,
    summary: "What isolation the machine running the sandbox offers",
    described: "Support",
  },
  configure: {
    verb: "PATCH",
    path: "/config",
    args: ["body"],
    body: sandboxConfigRequestSchema,
    answer: "empty",
    summary:
      "Change sandbox settings. The isolation fields confine commands under the local container runtime (on Cloudflare the container is " +
      "the isolation); changing them restarts a running container. Asking for an isolation the machine lacks fails with 501 ISOLATION_UNAVAILABLE.",
    described: "Saved",
  },
  destroy: {
    verb: "DELETE",
    path: "/",
    args: ["query"],
    query: destroyQuerySchema,
    answer: "empty",
    summary:
      "Destroy the sandbox's container now (SIGKILL). `keep=true` saves its durable workspace first (nothing is destroyed when that fails); " +
      "without it the durable workspace is forgotten (snapshots stay).",
    described: "Destroyed",
    // The query's "true" is the method's boolean.
    byHand: ["route"],
  },
} as const satisfies Record<string, Binding>;
