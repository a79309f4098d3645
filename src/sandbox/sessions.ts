/**
 * The Durable Object's session and env calls, forwarded to the container's /api/session and /api/env
 * routes after validating the RPC arguments. Sandbox-level env vars are not here: the Durable Object
 * keeps those in its config (they outlive a container) and pushes them to each container it runs.
 */
import {
  createSessionRequestSchema,
  SESSION_ROUTES,
  sessionIdSchema,
  setEnvRequestSchema,
  type DeleteSessionResponse,
  type ListSessionsResponse,
  type SessionInfo,
  type SessionResponse,
} from "../../protocol/sessions.ts";
import type { CreateSessionOptions, DeleteSessionResult, EnvVarsUpdate } from "../rpc/sessions.ts";
import type { ContainerApi } from "./container-api.ts";
import { parseRequest } from "./request.ts";

export async function createSession(api: ContainerApi, options: CreateSessionOptions = {}): Promise<SessionInfo> {
  const body = parseRequest(createSessionRequestSchema, options, "session request");
  return (await api.json<SessionResponse>("POST", SESSION_ROUTES.create, body)).session;
}

export async function getSession(api: ContainerApi, id: string): Promise<SessionInfo> {
  return (await api.json<SessionResponse>("GET", SESSION_ROUTES.one(sessionId(id)))).session;
}

export async function listSessions(api: ContainerApi): Promise<SessionInfo[]> {
  return (await api.json<ListSessionsResponse>("GET", SESSION_ROUTES.list)).sessions;
}

export async function deleteSession(api: ContainerApi, id: string): Promise<DeleteSessionResult> {
  return api.record<DeleteSessionResponse>("DELETE", SESSION_ROUTES.one(sessionId(id)));
}

export async function setSessionEnv(api: ContainerApi, id: string, vars: Record<string, string | null>): Promise<void> {
  await api.json("POST", SESSION_ROUTES.env, parseRequest(setEnvRequestSchema, { vars, sessionId: id }, "env request"));
}

/** Validates an env update; `undefined` values (kept by RPC, dropped by JSON) mean unset, like null. */
export function envUpdate(vars: EnvVarsUpdate): Record<string, string | null> {
  let normalised: unknown = vars;
  if (typeof vars === "object" && vars !== null) {
    normalised = Object.fromEntries(Object.entries(vars).map(([name, value]) => [name, value === undefined ? null : value]));
  }
  return parseRequest(setEnvRequestSchema, { vars: normalised }, "env request").vars;
}

function sessionId(id: string): string {
  return parseRequest(sessionIdSchema, id, "session id");
}
