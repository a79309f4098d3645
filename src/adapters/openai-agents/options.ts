/**
 * What an EdgeSandboxClient is built from: where the service is (`url`, `token`, as for our other
 * adapters) and the Cloudflare client's own settings (exposed ports, time limits, archive limits),
 * which it passes on unchanged. The service speaks the Bridge API the SDK's Cloudflare client was
 * written for, so `url` is that client's `workerUrl` and `token` its `apiKey`.
 */
import type { CloudflareSandboxClientOptions } from "@openai/agents-extensions/sandbox/cloudflare";

/** The Cloudflare client's settings this client passes on (Omit would lose them to the options' index signature). */
type PassedOn = "exposedPorts" | "timeoutMs" | "createTimeoutMs" | "requestTimeoutMs" | "timeouts" | "mounts" | "archiveLimits";

export type EdgeSandboxClientOptions = Pick<CloudflareSandboxClientOptions, PassedOn> & {
  /** Base URL of the sandbox service, e.g. `https://sandbox.example.workers.dev`. */
  url: string;
  /** The service's API token (SANDBOX_API_TOKEN). */
  token?: string;
};

/** Our options as the Cloudflare client's: `url` → `workerUrl`, `token` → `apiKey`; the rest as it is. */
export function cloudflareOptions(options: Partial<EdgeSandboxClientOptions> & Record<string, unknown>): Partial<CloudflareSandboxClientOptions> {
  const { url, token, ...rest } = options;
  return {
    ...rest,
    ...(url === undefined ? {} : { workerUrl: url }),
    ...(token === undefined ? {} : { apiKey: token }),
  };
}
