/**
 * The AI SDK harness's sandbox provider (`harness-sandbox-v1`) for this service. Like a model
 * provider it is made once at module scope and does no I/O until asked: `createSession` makes (or
 * takes up) the sandbox named after the harness session, applies the provider's settings, marks it
 * as a session and exposes its ports; `resumeSession` reaches the same sandbox from any process by
 * that session id. A session id that was never created (or was destroyed) is `SESSION_NOT_FOUND`,
 * and a create that fails on the way leaves no container running behind it.
 */
import type { HarnessV1SandboxProvider } from "@ai-sdk/harness";
import type { Experimental_SandboxSession as SandboxSession } from "ai";
import type { SandboxClient } from "../../client/index.ts";
import { connect } from "../shared/connection.ts";
import { applyNetworkPolicy } from "./network-policy.ts";
import { asHarness, EdgeSandboxError, PROVIDER_ID } from "./errors.ts";
import { exposePorts } from "./ports.ts";
import { sandboxIdFor } from "./sandbox-id.ts";
import { parsePortsMarker, portsMarkerValue, SESSION_MARKER, SESSION_PORTS_MARKER } from "./session-marker.ts";
import { EdgeSandboxSession } from "./session.ts";
import { serviceOrigin, type EdgeSandboxProviderSettings } from "./settings.ts";

const DEFAULT_ID_PREFIX = "ai";

export interface CreateSessionOptions {
  sessionId?: string;
  abortSignal?: AbortSignal;
  identity?: string;
  onFirstCreate?: (session: SandboxSession, options: { abortSignal?: AbortSignal }) => Promise<void>;
}

export interface EdgeSandboxProvider extends HarnessV1SandboxProvider {
  readonly providerId: typeof PROVIDER_ID;
  readonly createSession: (options?: CreateSessionOptions) => Promise<EdgeSandboxSession>;
  readonly resumeSession: (options: { sessionId: string; abortSignal?: AbortSignal }) => Promise<EdgeSandboxSession>;
}

function clientFor(settings: EdgeSandboxProviderSettings, sandboxId: string): SandboxClient {
  if ("binding" in settings) return connect({ binding: settings.binding, sandboxId });
  return connect({ url: settings.url, sandboxId, ...(settings.token === undefined ? {} : { token: settings.token }), ...(settings.http === undefined ? {} : { http: settings.http }) });
}

async function sessionOf(client: SandboxClient, settings: EdgeSandboxProviderSettings, ports: readonly number[]): Promise<EdgeSandboxSession> {
  const { workspace } = await client.getInfo();
  return new EdgeSandboxSession({ client, workspace, ports, origin: serviceOrigin(settings), durable: settings.sandbox?.persistence != null });
}

export function createEdgeSandbox(settings: EdgeSandboxProviderSettings): EdgeSandboxProvider {
  const prefix = settings.idPrefix ?? DEFAULT_ID_PREFIX;
  const origin = serviceOrigin(settings);

  const createSession = async (options: CreateSessionOptions = {}): Promise<EdgeSandboxSession> => {
    options.abortSignal?.throwIfAborted();
    const client = clientFor(settings, await sandboxIdFor(prefix, options.sessionId));
    try {
      return await asHarness(async () => {
        if (settings.sandbox && Object.keys(settings.sandbox).length > 0) await client.configure(settings.sandbox);
        if (settings.network !== undefined) await applyNetworkPolicy(client, typeof settings.network === "string" ? { mode: settings.network } : settings.network);
        await client.setEnvVars({ [SESSION_MARKER]: options.sessionId ?? client.id, [SESSION_PORTS_MARKER]: portsMarkerValue(settings.ports ?? []) });
        const session = await sessionOf(client, settings, settings.ports ?? []);
        await exposePorts(client, session.ports, origin);
        options.abortSignal?.throwIfAborted();
        await options.onFirstCreate?.(session.restricted(), options.abortSignal === undefined ? {} : { abortSignal: options.abortSignal });
        return session;
      });
    } catch (error) {
      // Nothing half-made stays behind: the container stops, the mark goes.
      await client.setEnvVars({ [SESSION_MARKER]: undefined, [SESSION_PORTS_MARKER]: undefined }).catch(() => undefined);
      await client.destroy().catch(() => undefined);
      throw error;
    }
  };

  const resumeSession = async (options: { sessionId: string; abortSignal?: AbortSignal }): Promise<EdgeSandboxSession> => {
    options.abortSignal?.throwIfAborted();
    const client = clientFor(settings, await sandboxIdFor(prefix, options.sessionId));
    return asHarness(async () => {
      // Both marks in one command: the session's id on the first line, its ports on the second.
      const marked = await client.exec(`printf '%s\\n%s\\n' "$${SESSION_MARKER}" "$${SESSION_PORTS_MARKER}"`, { isolated: true });
      const [markedId = "", markedPorts = ""] = marked.stdout.split("\n");
      if (markedId !== options.sessionId) {
        // Looking started a container for a session that is not there: stop it again.
        await client.destroy().catch(() => undefined);
        throw new EdgeSandboxError({ message: `no sandbox session ${JSON.stringify(options.sessionId)} to resume (never created, or destroyed)`, code: "SESSION_NOT_FOUND", context: { sessionId: options.sessionId } });
      }
      // A stop ends the container and its preview URLs: the session's ports are exposed again.
      const ports = parsePortsMarker(markedPorts);
      await exposePorts(client, ports, origin);
      return sessionOf(client, settings, ports);
    });
  };

  return { specificationVersion: "harness-sandbox-v1", providerId: PROVIDER_ID, createSession, resumeSession };
}
