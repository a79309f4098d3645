/**
 * EdgeSandboxSession: the SDK's own Cloudflare session (commands, files, manifests, workspace
 * persist and hydrate, over the Bridge API this service serves) with what it cannot do against
 * Cloudflare's bridge: resolving an exposed port, and TTY commands each on a terminal of its own,
 * whose answers hold only their own output and end with their exit code (tty-commands.ts). Resolved
 * endpoints are recorded in the session's state, as the SDK's other providers do, so a resumed run
 * reuses them. Commands run as another user (`runAs`) keep the SDK's own path.
 */
import { CloudflareSandboxSession } from "@openai/agents-extensions/sandbox/cloudflare";
import {
  getRecordedExposedPortEndpoint,
  normalizeExposedPort,
  recordExposedPortEndpoint,
  type ExecCommandArgs,
  type ExposedPortEndpoint,
  type SandboxArchiveLimits,
  type SandboxConcurrencyLimits,
  type WriteStdinArgs,
} from "@openai/agents-core/sandbox";
import { getHttpSandbox } from "../../client/http.ts";
import { resolvePortEndpoint } from "./port-endpoint.ts";
import { ttyCommandLine } from "./tty-command-line.ts";
import { TtyCommands } from "./tty-commands.ts";

type SessionArgs = ConstructorParameters<typeof CloudflareSandboxSession>[0];

export class EdgeSandboxSession extends CloudflareSandboxSession {
  readonly #apiKey: string | undefined;
  readonly #tty: TtyCommands;

  constructor(args: SessionArgs & { concurrencyLimits?: SandboxConcurrencyLimits; archiveLimits?: SandboxArchiveLimits | null }) {
    super(args);
    this.#apiKey = args.apiKey;
    this.#tty = new TtyCommands(getHttpSandbox(this.state.sandboxId, { url: this.state.workerUrl, ...(args.apiKey === undefined ? {} : { token: args.apiKey }) }));
  }

  override async execCommand(args: ExecCommandArgs): Promise<string> {
    if (!args.tty || args.runAs !== undefined) return super.execCommand(args);
    const options = { ...(args.yieldTimeMs === undefined ? {} : { yieldTimeMs: args.yieldTimeMs }), ...(args.maxOutputTokens === undefined ? {} : { maxOutputTokens: args.maxOutputTokens }) };
    return this.#tty.start(ttyCommandLine(args, this.state.manifest.root, this.state.environment), options);
  }

  override async writeStdin(args: WriteStdinArgs): Promise<string> {
    if (!this.#tty.has(args.sessionId)) return super.writeStdin(args);
    const options = { ...(args.yieldTimeMs === undefined ? {} : { yieldTimeMs: args.yieldTimeMs }), ...(args.maxOutputTokens === undefined ? {} : { maxOutputTokens: args.maxOutputTokens }) };
    return this.#tty.write(args.sessionId, args.chars ?? "", options);
  }

  /** Kills the TTY commands still running, then closes as the SDK does (the sandbox's container stops). */
  override async close(): Promise<void> {
    await this.#tty.closeAll();
    await super.close();
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
