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
import { asHarness, EdgeSandboxError } from "./errors.ts";

export type PortProtocol = "http" | "https" | "ws";

/** Exposes each port the running container does not serve yet (a stale one again, with its URL). */
export async function exposePorts(client: SandboxClient, ports: readonly number[], origin: string | undefined): Promise<void> {
  await asHarness(async () => {
    const exposed = new Set((await client.getExposedPorts(origin === undefined ? {} : { origin })).map((entry) => entry.port));
    for (const port of ports) {
      if (!exposed.has(port)) await client.exposePort(port, origin === undefined ? {} : { origin });
    }
  });
}

/** Makes `ports` the exposed set: new ones exposed, the others unexposed (their URLs stop working). */
export async function replacePorts(client: SandboxClient, ports: readonly number[], origin: string | undefined): Promise<void> {
  await asHarness(async () => {
    const wanted = new Set(ports);
    for (const entry of await client.getExposedPorts(origin === undefined ? {} : { origin })) {
      if (!wanted.has(entry.port)) await client.unexposePort(entry.port);
    }
  });
  await exposePorts(client, ports, origin);
}

/**
 * The URL of a session's port in the scheme asked for; PORT_NOT_EXPOSED for a port that is not the
 * session's. A port of the session whose URL went stale with its container (a sleep, a restart) is
 * exposed again first: its URL, token included, is the one it had.
 */
export async function portEndpoint(
  client: SandboxClient,
  port: number,
  protocol: PortProtocol | undefined,
  origin: string | undefined,
  sessionPorts: readonly number[],
): Promise<HarnessV1PortEndpoint> {
  return asHarness(async () => {
    const options = origin === undefined ? {} : { origin };
    let exposed = (await client.getExposedPorts(options)).find((entry) => entry.port === port);
    if (!exposed && sessionPorts.includes(port)) exposed = await client.exposePort(port, options);
    if (!exposed) {
      throw new EdgeSandboxError({ message: `port ${port} is not exposed in sandbox ${client.id}: list it in the provider's ports, or call setPorts`, code: "PORT_NOT_EXPOSED", context: { port } });
    }
    const url = new URL(exposed.url, origin);
    const secure = url.protocol === "https:";
    if (protocol === "ws") url.protocol = secure ? "wss:" : "ws:";
    return { url: url.href };
  });
}
