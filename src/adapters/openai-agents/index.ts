/**
 * `edge-sandbox/openai-agents`: an OpenAI Agents SDK sandbox client on this service.
 *
 *   const client = new EdgeSandboxClient({ url, token, exposedPorts: [3000] });
 *   const session = await client.create(new Manifest({ entries: { "README.md": file({ content: "hi" }) } }));
 *   await session.execCommand({ cmd: "ls" });
 *   await session.resolveExposedPort(3000);   // { host, port, tls, query: "token=…", url }
 *
 * The SDK's own Cloudflare client (`@openai/agents-extensions/sandbox/cloudflare`) also works pointed
 * at the service (`workerUrl`, `apiKey`); this one adds exposed ports.
 */
export { EdgeSandboxClient } from "./client.ts";
export { EdgeSandboxSession } from "./session.ts";
export { endpointOfUrl } from "./port-endpoint.ts";
export type { EdgeSandboxClientOptions } from "./options.ts";
