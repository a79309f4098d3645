/**
 * A sandbox's life through the Bridge API: `POST /v1/sandbox` names a new one (→ `{id}`, nothing is
 * started until it is used), `GET /v1/sandbox/:id/running` → `{running}`, `DELETE /v1/sandbox/:id`
 * destroys its container (204). A Bridge sandbox is the sandbox of that id in our own API too.
 */
import { Hono } from "hono";
import type { ApiEnv } from "../types.ts";

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

export const bridgeCreateRoutes = new Hono<ApiEnv>().post("/", (c) => c.json({ id: newBridgeSandboxId() }));

export const bridgeLifecycleRoutes = new Hono<ApiEnv>()
  .get("/running", async (c) => {
    try {
      await c.var.sandbox.info();
      return c.json({ running: true });
    } catch {
      return c.json({ running: false });
    }
  })
  .delete("/", async (c) => {
    await c.var.sandbox.destroy();
    return c.body(null, 204);
  });
