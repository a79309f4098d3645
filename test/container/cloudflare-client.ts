/**
 * Cloudflare's own `SandboxClient` (from `@cloudflare/sandbox`) pointed at one of our container
 * servers: their Durable Object hands the client a stub on which only `containerFetch` is called, so a
 * stub that rewrites their container address to ours is all it needs.
 */
import { SandboxClient } from "@cloudflare/sandbox";

/** Cloudflare's reserved session id meaning "no session". */
export const NO_SESSION = "__DISABLE_SESSION__";

export function cloudflareClient(serverUrl: string): SandboxClient {
  const stub = {
    containerFetch: (url: string, init: RequestInit) => fetch(url.replace("http://localhost:3000", serverUrl), init),
  };
  return new SandboxClient({ stub: stub as never, port: 3000, retryTimeoutMs: 1_000 });
}
