/**
 * EdgeSandboxSession: the SDK's own Cloudflare session (commands with and without a TTY, stdin,
 * files, manifests, workspace persist and hydrate, over the Bridge API this service serves) with the
 * one thing it cannot do against Cloudflare's bridge: resolving an exposed port. Resolved endpoints
 * are recorded in the session's state, as the SDK's other providers do, so a resumed run reuses them.
 */
import { CloudflareSandboxSession } from "@openai/agents-extensions/sandbox/cloudflare";
import { getRecordedExposedPortEndpoint, normalizeExposedPort, recordExposedPortEndpoint, type ExposedPortEndpoint, type SandboxArchiveLimits, type SandboxConcurrencyLimits } from "@openai/agents-core/sandbox";
import { resolvePortEndpoint } from "./port-endpoint.ts";

type SessionArgs = ConstructorParameters<typeof CloudflareSandboxSession>[0];

export class EdgeSandboxSession extends CloudflareSandboxSession {
  readonly #apiKey: string | undefined;

  constructor(args: SessionArgs & { concurrencyLimits?: SandboxConcurrencyLimits; archiveLimits?: SandboxArchiveLimits | null }) {
    super(args);
    this.#apiKey = args.apiKey;
  }

  /** The port's endpoint (host, port, tls, and the token in `query`); `SandboxExposedPortUnavailableError` for a port that is not exposed. */
  override async resolveExposedPort(port: number): Promise<ExposedPortEndpoint> {
    const requested = normalizeExposedPort(port);
    const recorded = getRecordedExposedPortEndpoint(this.state, requested);
    if (recorded) return recorded;
    const endpoint = await resolvePortEndpoint(
      {
        workerUrl: this.state.workerUrl,
        sandboxId: this.state.sandboxId,
        ...(this.#apiKey === undefined ? {} : { apiKey: this.#apiKey }),
        configuredPorts: (this.state.configuredExposedPorts ?? []).map(normalizeExposedPort),
      },
      requested,
    );
    return recordExposedPortEndpoint(this.state, endpoint, requested);
  }
}
