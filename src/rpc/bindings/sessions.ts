/** Sessions and env vars over /v1 (../sessions.ts has their options). */
import { createSessionRequestSchema, deleteSessionResultSchema, sessionInfoSchema, setEnvRequestSchema } from "../../../protocol/sessions.ts";
import type { Binding } from "./binding.ts";

export const sessionBindings = {
  createSession: {
    verb: "POST",
    path: "/sessions",
    args: ["body"],
    body: createSessionRequestSchema,
    response: sessionInfoSchema,
    key: "session",
    status: 201,
    summary: "Create a session (cwd and env kept between its commands)",
    described: "Created",
  },
  listSessions: { verb: "GET", path: "/sessions", args: [], response: sessionInfoSchema.array(), key: "sessions", summary: "List sessions", described: "Sessions" },
  getSession: { verb: "GET", path: "/sessions/:sid", args: [{ path: "sid" }], response: sessionInfoSchema, key: "session", summary: "A session", described: "Session" },
  deleteSession: {
    verb: "DELETE",
    path: "/sessions/:sid",
    args: [{ path: "sid" }],
    response: deleteSessionResultSchema,
    summary: "Delete a session, killing its processes",
    described: "Deleted",
  },
  setEnvVars: {
    verb: "POST",
    path: "/env",
    args: [{ body: "vars" }, "body"],
    body: setEnvRequestSchema,
    answer: "empty",
    summary: "Set (string) or unset (null) env vars, for the sandbox (kept across restarts) or one session",
    described: "Set",
    // JSON has no undefined: the client sends null for a variable to unset.
    byHand: ["client"],
  },
} as const satisfies Record<string, Binding>;
