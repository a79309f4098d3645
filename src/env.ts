import type { SandboxObject } from "./sandbox/sandbox-object.ts";

/** Bindings, vars and secrets of the Worker (wrangler.toml; secrets via `wrangler secret put`). */
export interface Env {
  Sandbox: DurableObjectNamespace<SandboxObject>;
  /** Bearer token every /v1 request must carry. Unset: the API refuses all requests. */
  SANDBOX_API_TOKEN?: string;
  /** Local container runtime (`npm start` sets it). Only used where Cloudflare Containers are absent. */
  SANDBOX_CONTAINER_URL?: string;
  /** The local runtime's secret (`npm start` sets it): the runtime answers to nothing else. */
  SANDBOX_RUNTIME_SECRET?: string;
  /**
   * Where preview URLs live (`<port>-<id>.<domain>`, e.g. "preview.example.com", with a wildcard DNS
   * record and route to this Worker; the domain must serve nothing else). Unset: a service reached on
   * loopback hands out `<port>-<id>.localhost` URLs, and one reached elsewhere none
   * (PREVIEW_DOMAIN_NOT_CONFIGURED) unless SANDBOX_PREVIEW_PATH_ORIGIN is set.
   */
  SANDBOX_PREVIEW_DOMAIN?: string;
  /**
   * Path-based preview URLs, off unless set: the origin they are served on (e.g.
   * "https://preview.example.com", or locally "http://localhost:8787" beside the console at
   * http://127.0.0.1:8787). That origin serves preview ports only: the API, the console and the docs
   * answer 404 PREVIEW_ORIGIN_ONLY there, and other origins serve no path-based preview URL.
   */
  SANDBOX_PREVIEW_PATH_ORIGIN?: string;
  /** Default idle time before a sandbox's container sleeps ("10m" when unset). */
  SANDBOX_SLEEP_AFTER?: string;
  /**
   * On Cloudflare, "0" gives no sandbox outbound network, whatever its policy says: containers start
   * without the internet and the outbound handler refuses every request (rule "operator"). Unset or
   * "1": allowed; any other value closes it. Locally the runtime's own SANDBOX_NETWORK_ALLOWED rules.
   */
  SANDBOX_NETWORK_ALLOWED?: string;
  /** "on": serve the web console at / and the API reference at /v1/docs (`npm start` turns it on). */
  SANDBOX_CONSOLE?: string;
  /** The console's own page files (console/, wrangler.toml [assets]); only the Worker serves them. */
  ASSETS?: Fetcher;
  /** Where durable workspaces and snapshots are kept (wrangler.toml `[[r2_buckets]]`); a sandbox may name another binding. */
  SANDBOX_BACKUPS?: R2Bucket;
}
