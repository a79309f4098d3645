/**
 * A sandbox's life through the Bridge API: `POST /v1/sandbox` names a new one (→ `{id}`, nothing is
 * started until it is used), `GET /v1/sandbox/:id/running` → `{running}` (its container runs or
 * sleeps; never started by the question), `DELETE /v1/sandbox/:id`
 * destroys its container (204). A Bridge sandbox is the sandbox of that id in our own API too.
 *
 * The create body is what Bridge clients send (the OpenAI Agents SDK's Cloudflare client sends
 * `{exposedPorts?, timeoutMs?, createTimeoutMs?, mounts?}`): `exposedPorts` are exposed at once, so
 * `GET …/tunnel/:port` resolves them; bucket `mounts` are refused whole (501 `not_implemented`)
 * before anything is made, rather than a sandbox made without them. The time limits are the
 * client's own (it sends them with each call).
 */
import { Hono } from "hono";
import { z } from "zod";
import { previewPortSchema } from "../../../protocol/preview-ports.ts";
import { SandboxError } from "../../rpc/errors.ts";
import { rpcTransport } from "../../rpc/stub-transport.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";
import { openTunnel } from "./tunnel.ts";

export const bridgeCreateRequestSchema = z.looseObject({
  exposedPorts: z.array(previewPortSchema).max(32).optional(),
  timeoutMs: z.number().int().positive().optional(),
  createTimeoutMs: z.number().int().positive().optional(),
  mounts: z.array(z.record(z.string(), z.unknown())).optional(),
});

/** RFC 4648 base32, lower case: what Bridge clients expect an id to look like ([a-z2-7]). */
function base32(bytes: Uint8Array): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** A fresh sandbox id: 128 random bits in 26 characters. */
export function newBridgeSandboxId(): string {
  return base32(crypto.getRandomValues(new Uint8Array(16)));
}

export const bridgeCreateRoutes = new Hono<ApiEnv>().post("/", jsonBody(bridgeCreateRequestSchema), async (c) => {
  const { exposedPorts = [], mounts = [] } = c.req.valid("json");
  if (mounts.length > 0) {
    throw new SandboxError("Mounting a bucket is not available in this sandbox service: create the sandbox without mounts, and move files in with the file routes or hydrate", "NOT_SUPPORTED", { context: { feature: "mounts" } });
  }
  const id = newBridgeSandboxId();
  if (exposedPorts.length > 0) {
    const sandbox = rpcTransport(c.env.Sandbox.get(c.env.Sandbox.idFromName(id)));
    const origin = new URL(c.req.url).origin;
    for (const port of new Set(exposedPorts)) await openTunnel(sandbox, id, port, origin);
  }
  return c.json({ id });
});

export const bridgeLifecycleRoutes = new Hono<ApiEnv>()
  // Asked without starting the container. A sandbox asleep is still there (the next call wakes it);
  // one destroyed, or never started, is not.
  .get("/running", async (c) => {
    const { running, asleep } = await c.var.sandbox.status();
    return c.json({ running: running || asleep });
  })
  .delete("/", async (c) => {
    await c.var.sandbox.destroy();
    return c.body(null, 204);
  });
