/**
 * How every adapter reaches a sandbox: over the /v1 HTTP API (`{ url, token, sandboxId }`, for apps
 * in Node, Deno or Bun) or, inside a Worker, through the Sandbox Durable Object binding
 * (`{ binding: env.Sandbox, sandboxId }`). Either way the adapter gets the same SandboxClient.
 */
import { getHttpSandbox, getSandbox, type HttpSandboxOptions, type SandboxClient } from "../../client/index.ts";

/** The Sandbox Durable Object namespace of a Worker (`env.Sandbox`). */
export type SandboxBinding = Parameters<typeof getSandbox>[0];

export interface HttpConnection {
  /** Base URL of the sandbox service, e.g. `https://sandbox.example.workers.dev`. */
  url: string;
  /** The service's API token (SANDBOX_API_TOKEN). */
  token?: string;
  sandboxId: string;
  /** Reconnects of broken streams, a custom fetch, extra headers. */
  http?: Omit<HttpSandboxOptions, "url" | "token">;
}

export interface BindingConnection {
  binding: SandboxBinding;
  sandboxId: string;
}

export type SandboxConnection = HttpConnection | BindingConnection;

/** The client for a connection. Creating one does no I/O: the first call reaches the service. */
export function connect(connection: SandboxConnection): SandboxClient {
  if ("binding" in connection) return getSandbox(connection.binding, connection.sandboxId);
  return getHttpSandbox(connection.sandboxId, { ...connection.http, url: connection.url, ...(connection.token === undefined ? {} : { token: connection.token }) });
}
