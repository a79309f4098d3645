/**
 * Preview ports as tools: expose a port a server in the sandbox listens on (a URL of its own origin,
 * carrying its token unless public), list the exposed ones, and stop exposing one.
 */
import { z } from "zod";
import { exposePortRequestSchema, previewPortSchema } from "../../../protocol/preview-ports.ts";
import { defineTool, jsonResult } from "../tool.ts";

export const exposePort = defineTool({
  name: "expose_port",
  title: "Expose a port",
  description:
    "Makes a port a server in the sandbox listens on (1024–65535) reachable at a preview URL. Private unless public is true: the URL then carries its token.",
  input: z.strictObject({
    port: previewPortSchema.describe("The port inside the sandbox"),
    name: exposePortRequestSchema.shape.name.describe("A label for your own bookkeeping"),
    public: exposePortRequestSchema.shape.public.describe("Anyone with the URL may use it (default false)"),
  }),
  annotations: { openWorldHint: true },
  async run({ port, ...options }, call) {
    return jsonResult({ ...(await call.sandbox.exposePort(port, { ...options, origin: call.origin })) });
  },
});

export const listPorts = defineTool({
  name: "list_ports",
  title: "List exposed ports",
  description: "The sandbox's exposed ports and their preview URLs.",
  input: z.strictObject({}),
  annotations: { readOnlyHint: true },
  async run(_args, call) {
    return jsonResult({ ports: await call.sandbox.getExposedPorts({ origin: call.origin }) });
  },
});

export const unexposePort = defineTool({
  name: "unexpose_port",
  title: "Stop exposing a port",
  description: "Stops serving a port's preview URL (its token dies with it). A port that is not exposed is no error.",
  input: z.strictObject({ port: previewPortSchema.describe("The exposed port") }),
  annotations: { destructiveHint: true, idempotentHint: true },
  async run({ port }, call) {
    return jsonResult({ ...(await call.sandbox.unexposePort(port)) });
  },
});
