/**
 * The Durable Object's terminal calls: RPC arguments validated with the protocol schemas, then
 * forwarded to the container's /api/terminals routes. A viewer's WebSocket upgrade is passed through
 * to the container as it came (the container does the handshake), so bytes flow between the caller
 * and the PTY without the Durable Object reading them.
 */
import {
  createTerminalRequestSchema,
  resizeTerminalRequestSchema,
  TERMINAL_ROUTES,
  terminalIdSchema,
  terminalSinceSchema,
  terminalSocketQuerySchema,
  type TerminalInfo,
  type TerminalOutput,
} from "../../protocol/terminals.ts";
import { terminalInputBody, type TerminalIdResult, type TerminalKillResult, type TerminalOptions, type TerminalOutputOptions, type TerminalWriteResult } from "../rpc/terminals.ts";
import type { ContainerApi, PortFetcher } from "./container-api.ts";
import { parseRequest, query } from "./request.ts";

export async function createTerminal(api: ContainerApi, options: TerminalOptions = {}): Promise<TerminalInfo> {
  const body = parseRequest(createTerminalRequestSchema, options, "terminal request");
  return (await api.json<{ terminal: TerminalInfo }>("POST", TERMINAL_ROUTES.list, body)).terminal;
}

export async function listTerminals(api: ContainerApi): Promise<TerminalInfo[]> {
  return (await api.json<{ terminals: TerminalInfo[] }>("GET", TERMINAL_ROUTES.list)).terminals;
}

export async function getTerminal(api: ContainerApi, id: string): Promise<TerminalInfo> {
  return (await api.json<{ terminal: TerminalInfo }>("GET", TERMINAL_ROUTES.one(checkedId(id)))).terminal;
}

export async function writeTerminal(api: ContainerApi, id: string, data: string | Uint8Array): Promise<TerminalWriteResult> {
  const { terminalId, bytes } = await api.json<TerminalWriteResult>("POST", TERMINAL_ROUTES.write(checkedId(id)), terminalInputBody(data));
  return { terminalId, bytes };
}

export async function resizeTerminal(api: ContainerApi, id: string, cols: number, rows: number): Promise<TerminalInfo> {
  const body = parseRequest(resizeTerminalRequestSchema, { cols, rows }, "terminal size");
  return (await api.json<{ terminal: TerminalInfo }>("POST", TERMINAL_ROUTES.resize(checkedId(id)), body)).terminal;
}

export async function interruptTerminal(api: ContainerApi, id: string): Promise<TerminalIdResult> {
  await api.json("POST", TERMINAL_ROUTES.interrupt(checkedId(id)), {});
  return { terminalId: id };
}

export async function killTerminal(api: ContainerApi, id: string, signal?: string | number): Promise<TerminalKillResult> {
  const { terminalId, signal: sent } = await api.json<TerminalKillResult>("POST", TERMINAL_ROUTES.kill(checkedId(id)) + query({ signal }), {});
  return { terminalId, signal: sent };
}

export async function waitForTerminal(api: ContainerApi, id: string): Promise<TerminalInfo> {
  return (await api.json<{ terminal: TerminalInfo }>("GET", TERMINAL_ROUTES.wait(checkedId(id)))).terminal;
}

export async function terminalOutput(api: ContainerApi, id: string, options: TerminalOutputOptions = {}): Promise<TerminalOutput> {
  const { since } = parseRequest(terminalSinceSchema, { since: options.since }, "output cursor");
  const { success: _success, timestamp: _timestamp, ...output } = await api.json<TerminalOutput & { success: true; timestamp: string }>(
    "GET",
    TERMINAL_ROUTES.output(checkedId(id)) + query({ since }),
  );
  return output;
}

export async function deleteTerminal(api: ContainerApi, id: string): Promise<TerminalIdResult> {
  const { terminalId } = await api.json<{ terminalId: string }>("DELETE", TERMINAL_ROUTES.one(checkedId(id)));
  return { terminalId };
}

/**
 * The upgrade of `request` (which must ask for a WebSocket) to the container's viewer socket of the
 * terminal, from `?since=` of the request's URL. The answer is the container's: 101 with the socket,
 * or its coded error.
 */
export async function connectTerminal(port: PortFetcher, id: string, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const query = { since: url.searchParams.get("since") ?? undefined, mode: url.searchParams.get("mode") ?? undefined };
  const { since, mode } = parseRequest(terminalSocketQuerySchema, query, "terminal socket query");
  const headers = new Headers({ upgrade: "websocket" });
  return port.fetch(new Request(`http://container${TERMINAL_ROUTES.ws(checkedId(id), since, mode)}`, { method: "GET", headers }));
}

function checkedId(id: string): string {
  return parseRequest(terminalIdSchema, id, "terminal id");
}
