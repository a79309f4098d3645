/**
 * EdgeSandboxClient: an OpenAI Agents SDK sandbox client for this service. It is the SDK's own
 * Cloudflare client (this service serves the Bridge API it speaks), taking our `{url, token}` and
 * handing out EdgeSandboxSessions, which also resolve exposed ports. Sessions it creates or resumes
 * are built from the state the Cloudflare client made, so everything the SDK does on creation
 * (environment, manifest) is done once, by the SDK.
 */
import { CloudflareSandboxClient, type CloudflareSandboxSession } from "@openai/agents-extensions/sandbox/cloudflare";
import { normalizeSandboxClientCreateArgs, type Manifest, type SandboxClientCreateArgs, type SandboxClientOptions } from "@openai/agents-core/sandbox";
import { cloudflareOptions, type EdgeSandboxClientOptions } from "./options.ts";
import { EdgeSandboxSession } from "./session.ts";

type CloudflareState = CloudflareSandboxSession["state"];

export class EdgeSandboxClient extends CloudflareSandboxClient {
  readonly #token: string | undefined;
  readonly #archiveLimits: EdgeSandboxClientOptions["archiveLimits"];

  constructor(options: EdgeSandboxClientOptions) {
    super(cloudflareOptions(options));
    this.#token = options.token;
    this.#archiveLimits = options.archiveLimits;
  }

  override async create(args?: SandboxClientCreateArgs | Manifest, manifestOptions?: SandboxClientOptions): Promise<EdgeSandboxSession> {
    const normalized = normalizeSandboxClientCreateArgs(args, manifestOptions);
    const options = normalized.options === undefined ? undefined : cloudflareOptions(normalized.options);
    const session = await super.create({ ...normalized, ...(options === undefined ? {} : { options }) });
    return new EdgeSandboxSession({
      state: session.state,
      ...this.#apiKeyFor(options?.apiKey),
      ...(normalized.concurrencyLimits === undefined ? {} : { concurrencyLimits: normalized.concurrencyLimits }),
      archiveLimits: normalized.archiveLimits === undefined ? this.#archiveLimits : normalized.archiveLimits,
    });
  }

  override async resume(state: CloudflareState): Promise<EdgeSandboxSession> {
    const session = await super.resume(state);
    return new EdgeSandboxSession({ state: session.state, ...this.#apiKeyFor(), archiveLimits: this.#archiveLimits });
  }

  #apiKeyFor(override?: string): { apiKey?: string } {
    const apiKey = override ?? this.#token;
    return apiKey === undefined ? {} : { apiKey };
  }
}
