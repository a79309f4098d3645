/**
 * Ports of a harness session are the service's preview ports. A port's URL is a plain `https://`
 * (or `wss://`; `http://`/`ws://` where the service itself is plain HTTP, as under `npm start`)
 * URL with the port's token in its query: no header to carry, so any WebSocket client can open it,
 * and the same URL works on every reconnect for as long as the port stays exposed (its token only
 * changes when it is unexposed and exposed again). Other query parameters pass through to the
 * server in the sandbox; the token does not.
 */
import type { HarnessV1PortEndpoint } from "@ai-sdk/harness";
import type { SandboxClient } from "../../client/index.ts";
import { asHarness, EdgeSandboxError, hasCode } from "./errors.ts";

export type PortProtocol = "http" | "https" | "ws";

/** Exposes each port that is not exposed yet. */
export async function exposePorts(client: SandboxClient, ports: readonly number[], origin: string | undefined): Promise<void> {
  await asHarness(async () => {
    const exposed = new Set((await client.getExposedPorts(origin === undefined ? {} : { origin })).map((entry) => entry.port));
    for (const port of ports) {
      if (exposed.has(port)) continue;
      try {
        await client.exposePort(port, origin === undefined ? {} : { origin });
      } catch (error) {
        if (!hasCode(error, "PORT_ALREADY_EXPOSED")) throw error;
      }
    }
  });
}

/** Makes `ports` the exposed set: new ones exposed, the others unexposed (their URLs stop working). */
export async function replacePorts(client: SandboxClient, ports: readonly number[], origin: string | undefined): Promise<void> {
  await asHarness(async () => {
    const wanted = new Set(ports);
    for (const entry of await client.getExposedPorts(origin === undefined ? {} : { origin })) {
      if (wanted.has(entry.port)) continue;
      try {
        await client.unexposePort(entry.port);
      } catch (error) {
        if (!hasCode(error, "PORT_NOT_EXPOSED")) throw error;
      }
    }
  });
  await exposePorts(client, ports, origin);
}

/** The URL of an exposed port in the scheme asked for; PORT_NOT_EXPOSED for a port that is not. */
export async function portEndpoint(client: SandboxClient, port: number, protocol: PortProtocol | undefined, origin: string | undefined): Promise<HarnessV1PortEndpoint> {
  return asHarness(async () => {
    const exposed = (await client.getExposedPorts(origin === undefined ? {} : { origin })).find((entry) => entry.port === port);
    if (!exposed) {
      throw new EdgeSandboxError({ message: `port ${port} is not exposed in sandbox ${client.id}: list it in the provider's ports, or call setPorts`, code: "PORT_NOT_EXPOSED", context: { port } });
    }
    const url = new URL(exposed.url, origin);
    const secure = url.protocol === "https:";
    if (protocol === "ws") url.protocol = secure ? "wss:" : "ws:";
    return { url: url.href };
  });
}
