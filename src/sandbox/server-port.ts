/**
 * The way to the container's server: its port through `ctx.container.getTcpPort`, every request
 * carrying the secret the server answers to. The Durable Object chooses that secret once and keeps
 * it in its storage (so an object evicted from memory while its container runs still reaches it) and
 * hands it to every start of its container in ENGINE_SERVER_SECRET_VAR: the local runtime's engine
 * takes it out of the container's environment and gives it to the server it starts; on Cloudflare
 * the image's server reads it from its environment (container/main.ts).
 */
import { randomBytes } from "node:crypto";
import type { PortFetcher } from "./container-api.ts";

const SECRET_KEY = "serverSecret";

/** The object's server secret, made and kept on first use. */
export async function serverSecret(storage: DurableObjectStorage): Promise<string> {
  const kept = await storage.get<string>(SECRET_KEY);
  if (kept) return kept;
  const made = randomBytes(32).toString("base64url");
  await storage.put(SECRET_KEY, made);
  return made;
}

/** A request to the server, its authorization set. */
export function authorized(request: Request, secret: string): Request {
  const headers = new Headers(request.headers);
  headers.set("authorization", `Bearer ${secret}`);
  return new Request(request, { headers });
}

/** A port's fetch that sends the secret along with every request (WebSocket upgrades included). */
export function authorizedPort(port: PortFetcher, secret: string): PortFetcher {
  return {
    fetch(input, init) {
      if (input instanceof Request) return port.fetch(authorized(init ? new Request(input, init) : input, secret));
      // A URL with init goes on as given (a body re-wrapped in a Request would go out chunked).
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${secret}`);
      return port.fetch(input, { ...init, headers });
    },
  };
}
