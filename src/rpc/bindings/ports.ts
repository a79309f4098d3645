/** Preview ports over /v1: expose, list, unexpose (../ports.ts has their options and URL forms). */
import { exposedPortSchema, exposePortRequestSchema, unexposedPortSchema } from "../../../protocol/preview-ports.ts";
import type { Binding } from "./binding.ts";

export const portBindings = {
  exposePort: {
    verb: "POST",
    path: "/ports",
    args: [{ body: "port" }, "body"],
    body: exposePortRequestSchema,
    response: exposedPortSchema,
    status: 201,
    summary:
      "Expose a port of the sandbox (1024–65535, not the sandbox's own server port) at a preview URL on an origin of its own: " +
      "https://{port}-{id}.{SANDBOX_PREVIEW_DOMAIN}/, or http://{port}-{id}.localhost:{port}/ when this service is on a loopback origin, " +
      "or {SANDBOX_PREVIEW_PATH_ORIGIN}/v1/sandboxes/{id}/ports/{port}/ where the operator set one. Private unless `public`: the URL " +
      "carries a token once: a random one, or `token` (1–16 of a-z, 0-9, _) for a URL that stays the same. Exposing again is no error: " +
      "it keeps the token unless another is given (the old one then stops working), and makes the running container serve the URL " +
      "(a URL is served only by the container it was exposed in: after a sleep or restart it is 410 STALE_PREVIEW_URL until exposed again; " +
      "this starts the container when none runs). 400 INVALID_PORT, 400 INVALID_REQUEST (a bad token), " +
      "400 SANDBOX_ID_NOT_HOST_SAFE (host-based URLs need an id of lowercase letters, digits and -), " +
      "409 PREVIEW_TOKEN_IN_USE (another port has that token), 501 PREVIEW_DOMAIN_NOT_CONFIGURED.",
    described: "Exposed",
    // URLs are made on the request's own origin; the port is checked by the Durable Object (INVALID_PORT), so the client sends it as given.
    byHand: ["route", "client"],
  },
  getExposedPorts: {
    verb: "GET",
    path: "/ports",
    args: [],
    response: exposedPortSchema.array(),
    key: "ports",
    summary: "The ports the running container serves, and their URLs (none while no container runs; never starts one)",
    described: "Exposed ports",
    // URLs are made on the request's own origin.
    byHand: ["route"],
  },
  unexposePort: {
    verb: "DELETE",
    path: "/ports/:port",
    args: [{ path: "port" }],
    response: unexposedPortSchema,
    summary: "Unexpose a port: its URL and token stop working (404 PORT_NOT_EXPOSED from then on). A port that is not exposed is no error.",
    described: "Unexposed",
    // The path segment becomes a number for the Durable Object, which refuses anything else as INVALID_PORT.
    byHand: ["route"],
  },
} as const satisfies Record<string, Binding>;
