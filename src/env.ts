import type { Sandbox } from "./sandbox.ts";

/** Bindings, vars and secrets of the Worker (wrangler.toml; secrets via `wrangler secret put`). */
export interface Env {
  Sandbox: DurableObjectNamespace<Sandbox>;
  /** Bearer token every /v1 request must carry. Unset: the API refuses all requests. */
  SANDBOX_API_TOKEN?: string;
  /** Local container runtime (`npm start` sets it). Only used where Cloudflare Containers are absent. */
  SANDBOX_CONTAINER_URL?: string;
  /** The local runtime's secret (`npm start` sets it): the runtime answers to nothing else. */
  SANDBOX_RUNTIME_SECRET?: string;
  /**
   * Where host-based preview URLs live (`<port>-<id>.<domain>`, e.g. "preview.example.com", with a
   * wildcard DNS record and route to this Worker). Unset: preview URLs are path-based only.
   */
  SANDBOX_PREVIEW_DOMAIN?: string;
  /** Default idle time before a sandbox's container sleeps ("10m" when unset). */
  SANDBOX_SLEEP_AFTER?: string;
  /** "on": serve the web console at / and the API reference at /v1/docs (`npm start` turns it on). */
  SANDBOX_CONSOLE?: string;
  /** The console's own page files (console/, wrangler.toml [assets]); only the Worker serves them. */
  ASSETS?: Fetcher;
  /** Where durable workspaces and snapshots are kept (wrangler.toml `[[r2_buckets]]`); a sandbox may name another binding. */
  SANDBOX_BACKUPS?: R2Bucket;
}
