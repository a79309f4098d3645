/**
 * Terminals as they cross between a caller and the Sandbox Durable Object (Workers RPC) or the
 * Worker's /v1 API (HTTP): the options of each call and the results. Records and frames are the
 * protocol's own (protocol/terminals.ts).
 */
import { bytesToBase64 } from "../client/bytes.ts";
import type { CreateTerminalRequest, TerminalInfo, TerminalOutput } from "../../protocol/terminals.ts";

/** createTerminal's options: command (default: the login shell), cwd, env, cols, rows, sessionId, terminalId. */
export type TerminalOptions = CreateTerminalRequest;

export interface TerminalOutputOptions {
  /** The cursor a previous read or the WebSocket's `cursor` frame gave (0: from the start). */
  since?: number;
}

export interface TerminalWriteResult {
  terminalId: string;
  bytes: number;
}

export interface TerminalKillResult {
  terminalId: string;
  signal: string;
}

export type { TerminalInfo, TerminalOutput };

/** The write body for input: text as UTF-8, bytes as base64. */
export function terminalInputBody(data: string | Uint8Array): { data: string; encoding: "utf8" | "base64" } {
  return typeof data === "string" ? { data, encoding: "utf8" } : { data: bytesToBase64(data), encoding: "base64" };
}
