/**
 * A sandbox port as the OpenAI Agents SDK wants it resolved (`ExposedPortEndpoint`: host, port, tls,
 * query), read from the service's Bridge route `GET /v1/sandbox/:id/tunnel/:port`, the one Cloudflare's
 * bridge lacks. A port the client was configured with (`exposedPorts`) but that is not exposed (a
 * sandbox made before, or unexposed since) is exposed on the way (`POST …/tunnel/:port`); any other
 * port that is not exposed is `SandboxExposedPortUnavailableError`, never a URL that cannot work.
 * The endpoint's query carries the port's token: the URL it makes is usable as it is.
 */
import { SandboxExposedPortUnavailableError, SandboxProviderError, type ExposedPortEndpoint } from "@openai/agents-core/sandbox";

export interface PortEndpointTarget {
  workerUrl: string;
  sandboxId: string;
  apiKey?: string;
  /** Ports the client may expose on demand. */
  configuredPorts: readonly number[];
}

interface BridgeTunnel {
  port: number;
  url: string;
}

interface BridgeError {
  error?: string;
  code?: string;
}

async function tunnelCall(target: PortEndpointTarget, port: number, method: "GET" | "POST"): Promise<Response> {
  const headers = new Headers({ "content-type": "application/json" });
  if (target.apiKey !== undefined) headers.set("authorization", `Bearer ${target.apiKey}`);
  try {
    return await fetch(`${target.workerUrl}/v1/sandbox/${encodeURIComponent(target.sandboxId)}/tunnel/${port}`, {
      method,
      headers,
      ...(method === "POST" ? { body: "{}" } : {}),
    });
  } catch (error) {
    throw new SandboxProviderError(`could not reach the sandbox service to resolve port ${port}: ${(error as Error).message}`, {
      provider: "edge-sandbox",
      sandboxId: target.sandboxId,
      port,
    });
  }
}

async function failure(response: Response, target: PortEndpointTarget, port: number): Promise<Error> {
  const body = (await response.json().catch(() => ({}))) as BridgeError;
  const details = { provider: "edge-sandbox", sandboxId: target.sandboxId, port, status: response.status, code: body.code };
  const message = `port ${port} of sandbox ${target.sandboxId} cannot be resolved: ${body.code ?? response.status}: ${body.error ?? response.statusText}`;
  if (body.code === "port_not_exposed" || body.code === "invalid_request") return new SandboxExposedPortUnavailableError(message, details);
  return new SandboxProviderError(message, details);
}

/** The endpoint of an exposed sandbox port (`url` is the whole URL, token included). */
export function endpointOfUrl(href: string): ExposedPortEndpoint {
  const url = new URL(href);
  const tls = url.protocol === "https:" || url.protocol === "wss:";
  return {
    host: url.hostname,
    port: url.port === "" ? (tls ? 443 : 80) : Number(url.port),
    tls,
    query: url.search.replace(/^\?/, ""),
    url: url.href,
  };
}

export async function resolvePortEndpoint(target: PortEndpointTarget, port: number): Promise<ExposedPortEndpoint> {
  let response = await tunnelCall(target, port, "GET");
  if (response.status === 404 && target.configuredPorts.includes(port)) {
    await response.body?.cancel();
    response = await tunnelCall(target, port, "POST");
  }
  if (!response.ok) throw await failure(response, target, port);
  const tunnel = (await response.json()) as BridgeTunnel;
  return endpointOfUrl(tunnel.url);
}
