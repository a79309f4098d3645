/**
 * The secret a server on loopback answers to. The local runtime and every container server it starts
 * listen on 127.0.0.1, where any process of the machine — a command in a sandbox among them — can
 * connect; so each is given a secret at start and refuses, before any route runs, a request that
 * does not carry it as `Authorization: Bearer <secret>`.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** A fresh secret: 256 random bits, URL-safe. */
export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** The header value that carries `secret`. */
export function bearer(secret: string): string {
  return `Bearer ${secret}`;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/** Whether the request carries `secret`; compared in constant time (hashes have equal lengths). */
export function carriesSecret(req: IncomingMessage, secret: string): boolean {
  const header = req.headers.authorization;
  if (typeof header !== "string" || !header.startsWith("Bearer ")) return false;
  return timingSafeEqual(digest(header.slice("Bearer ".length).trim()), digest(secret));
}
