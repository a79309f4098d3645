/**
 * Terminals as they cross between a caller and the Sandbox Durable Object (Workers RPC) or the
 * Worker's /v1 API (HTTP): the options of each call and the results. Records and frames are the
 * protocol's own (protocol/terminals.ts).
 */
import { bytesToBase64 } from "./bytes.ts";
import type { CreateTerminalRequest, TerminalIdResult, TerminalInfo, TerminalKillResult, TerminalOutput, TerminalWriteResult } from "../../protocol/terminals.ts";

/** createTerminal's options: command (default: the login shell), cwd, env, cols, rows, sessionId, terminalId. */
export type TerminalOptions = CreateTerminalRequest;

export interface TerminalOutputOptions {
  /** The cursor a previous read or the WebSocket's `cursor` frame gave (0: from the start). */
  since?: number;
}

export type { TerminalIdResult, TerminalInfo, TerminalKillResult, TerminalOutput, TerminalWriteResult };

/** The write body for input: text as UTF-8, bytes as base64. */
export function terminalInputBody(data: string | Uint8Array): { data: string; encoding: "utf8" | "base64" } {
  return typeof data === "string" ? { data, encoding: "utf8" } : { data: bytesToBase64(data), encoding: "base64" };
}

/**
 * Workers RPC cannot carry a WebSocket, so a viewer's upgrade reaches the Durable Object through its
 * fetch handler instead, at this path; the transports build the request and the Durable Object
 * recognises it.
 */
const SOCKET_PATH = /^\/__sandbox\/terminals\/([^/]+)\/ws$/;

export function terminalSocketRequest(id: string, request: Request): Request {
  const given = new URL(request.url).searchParams;
  const url = new URL(`http://sandbox/__sandbox/terminals/${encodeURIComponent(id)}/ws`);
  // Where to start, and whether the socket is view-only: the rest of the caller's query stays behind.
  for (const name of ["since", "mode"]) {
    const value = given.get(name);
    if (value !== null) url.searchParams.set(name, value);
  }
  return new Request(url, { headers: { upgrade: "websocket" } });
}

/** The terminal id of a viewer's upgrade sent to the Durable Object's fetch handler (undefined: another request). */
export function terminalSocketId(request: Request): string | undefined {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return undefined;
  const match = SOCKET_PATH.exec(new URL(request.url).pathname);
  return match ? decodeURIComponent(match[1]!) : undefined;
}
