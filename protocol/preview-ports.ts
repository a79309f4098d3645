/**
 * Preview ports: a port inside the sandbox made reachable from outside through the service. This is
 * the contract both sides share: which ports may be exposed, the exposure request, the container
 * server's proxy route, and the headers that carry what the outer hops learned (the prefix the
 * caller used, the caller's own Authorization) on to the sandbox's server.
 *
 * The container server proxies `/api/ports/{port}/proxy/{rest}` to `127.0.0.1:{port}` inside the
 * sandbox's network (HTTP of any method, and WebSocket upgrades), behind its secret like every
 * other route.
 */
import * as z from "zod";
import { CONTAINER_SERVER_PORT } from "./runtime.ts";
import { lazySchema } from "./lazy-schema.ts";

/** Ports below this are privileged; a sandbox's servers listen above it. */
export const MIN_PREVIEW_PORT = 1024;
export const MAX_PREVIEW_PORT = 65535;

/** A port a sandbox may expose: 1024–65535, except the container server's own. */
export const previewPortSchema = lazySchema(() => z
  .number({ error: "port must be a number" })
  .int("port must be a whole number")
  .min(MIN_PREVIEW_PORT, `port must be ${MIN_PREVIEW_PORT}–${MAX_PREVIEW_PORT}`)
  .max(MAX_PREVIEW_PORT, `port must be ${MIN_PREVIEW_PORT}–${MAX_PREVIEW_PORT}`)
  .refine((port) => port !== CONTAINER_SERVER_PORT, `port ${CONTAINER_SERVER_PORT} is the sandbox's own server and cannot be exposed`));

/** Longest custom preview token: it is part of the URL, and short enough to type. */
export const MAX_PREVIEW_TOKEN_LENGTH = 16;

/**
 * A custom preview token, chosen by the caller so a URL stays the same across exposures: 1–16 of
 * a–z, 0–9 and `_` (what Cloudflare's SDK accepts, so a token chosen for it works here unchanged).
 */
export const previewTokenSchema = lazySchema(() => z
  .string({ error: "token must be a string" })
  .min(1, "token cannot be empty")
  .max(MAX_PREVIEW_TOKEN_LENGTH, `token must be at most ${MAX_PREVIEW_TOKEN_LENGTH} characters`)
  .regex(/^[a-z0-9_]+$/, "token may hold only lowercase letters a-z, digits 0-9 and _"));

export const exposePortRequestSchema = lazySchema(() => z.strictObject({
  port: previewPortSchema,
  /** A label for the caller's own bookkeeping. */
  name: z.string().min(1).max(64).optional(),
  /** true: anyone with the URL may use it; false (default): the URL's token, its cookie or the API token is required. */
  public: z.boolean().optional(),
  /**
   * The port's token, instead of a random one: the same token gives the same URL, another rotates it
   * (the old one stops working). Without it, a port already exposed keeps its token.
   */
  token: previewTokenSchema.optional(),
}));
export type ExposePortRequest = z.input<typeof exposePortRequestSchema>;

/** An exposed port as callers see it. `url` carries the port's token (`?token=`) unless the port is public. */
export const exposedPortSchema = lazySchema(() => z.object({
  port: z.number().int(),
  url: z.string().describe("The preview URL; a private port's carries its token once (?token=)"),
  name: z.string().optional(),
  public: z.boolean(),
  exposedAt: z.string().describe("ISO time the port was first exposed (kept by later exposures until it is unexposed)"),
  status: z.literal("active").describe("Listed ports are served by the running container; a restart makes them stale until exposed again"),
}));
export type ExposedPort = z.infer<typeof exposedPortSchema>;
export const unexposedPortSchema = lazySchema(() => z.object({ port: z.number().int() }));
export type UnexposePortResult = z.infer<typeof unexposedPortSchema>;

/** The container server's proxy route of a port; `rest` starts with `/` (or is empty). */
export const PORT_PROXY_ROUTES = {
  prefix: "/api/ports/",
  proxy: (port: number, rest = "/") => `/api/ports/${port}/proxy${rest}`,
  /** Matches a proxy path: the port and the rest of the path (with its leading slash, possibly empty). */
  pattern: /^\/api\/ports\/(\d{1,5})\/proxy(\/.*)?$/,
  /**
   * A raw TCP connection to the port: asked as an upgrade (`Upgrade: tcp`), answered 101, then the
   * bytes of both ways as they are (what workerd's `getTcpPort` carries through the local sidecar).
   */
  tunnel: (port: number) => `/api/ports/${port}/tunnel`,
  tunnelPattern: /^\/api\/ports\/(\d{1,5})\/tunnel$/,
  tunnelProtocol: "tcp",
} as const;

/** Headers the outer hops set for the sandbox's server (set by the service, never taken from callers as they come). */
export const PORT_HEADERS = {
  /** The path prefix the caller used, stripped before forwarding (empty for the host-based form). */
  forwardedPrefix: "x-forwarded-prefix",
  forwardedHost: "x-forwarded-host",
  forwardedProto: "x-forwarded-proto",
  /**
   * The caller's own Authorization header, carried under another name past the hop to the container
   * server (whose own Authorization is its secret) and restored there.
   */
  carriedAuthorization: "x-sandbox-port-authorization",
} as const;
