/**
 * The sandbox that executeCommand and the process manager work in: a Mastra sandbox with this
 * service's client underneath (sandbox.ts's EdgeSandbox is one). Named apart from EdgeSandbox so
 * that those modules and the sandbox that makes them do not import each other.
 */
import type { MastraSandbox } from "@mastra/core/workspace";
import type { SandboxClient } from "../../client/index.ts";

export type ClientSandbox = MastraSandbox & { readonly client: SandboxClient };
