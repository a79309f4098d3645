/** Terminals over /v1: the resource (create, list, get, output, write, resize, interrupt, kill, wait, delete) and its viewer's WebSocket (../terminals.ts has their options). */
import {
  createTerminalRequestSchema,
  resizeTerminalRequestSchema,
  terminalIdResultSchema,
  terminalInfoSchema,
  terminalKillQuerySchema,
  terminalKillResultSchema,
  terminalOutputQuerySchema,
  terminalOutputSchema,
  terminalWriteResultSchema,
  writeTerminalRequestSchema,
} from "../../../protocol/terminals.ts";
import type { Binding } from "./binding.ts";

export const terminalBindings = {
  createTerminal: {
    verb: "POST",
    path: "/terminals",
    args: ["body"],
    body: createTerminalRequestSchema,
    response: terminalInfoSchema,
    key: "terminal",
    status: 201,
    summary:
      "Create a terminal: a program on a pseudo-terminal (default: the login shell) of the asked size. It is a resource, not a " +
      "connection: it runs until it exits or is killed, whoever watches it.",
    described: "Started",
  },
  listTerminals: {
    verb: "GET",
    path: "/terminals",
    args: [],
    response: terminalInfoSchema.array(),
    key: "terminals",
    summary: "List terminals (exited ones too, until deleted)",
    described: "Terminals",
  },
  getTerminal: {
    verb: "GET",
    path: "/terminals/:tid",
    args: [{ path: "tid" }],
    response: terminalInfoSchema,
    key: "terminal",
    summary: "A terminal (404 TERMINAL_NOT_FOUND for an unknown id)",
    described: "Terminal",
  },
  deleteTerminal: {
    verb: "DELETE",
    path: "/terminals/:tid",
    args: [{ path: "tid" }],
    response: terminalIdResultSchema,
    summary: "Kill (when running) and forget a terminal",
    described: "Deleted",
  },
  terminalOutput: {
    verb: "GET",
    path: "/terminals/:tid/output",
    args: [{ path: "tid" }, "query"],
    query: terminalOutputQuerySchema,
    response: terminalOutputSchema,
    summary: "The retained output after a cursor, and the cursor to pass next time",
    described: "Output",
  },
  writeTerminal: {
    verb: "POST",
    path: "/terminals/:tid/write",
    args: [{ path: "tid" }, { body: "data" }],
    body: writeTerminalRequestSchema,
    response: terminalWriteResultSchema,
    summary: "Input as typed (utf8 text or base64 bytes)",
    described: "Written",
    // The method takes text or bytes; the body carries them as utf8 or base64.
    byHand: ["route", "client"],
  },
  resizeTerminal: {
    verb: "POST",
    path: "/terminals/:tid/resize",
    args: [{ path: "tid" }, { body: "cols" }, { body: "rows" }],
    body: resizeTerminalRequestSchema,
    response: terminalInfoSchema,
    key: "terminal",
    summary: "Resize: the program sees SIGWINCH and the new size",
    described: "Resized",
  },
  interruptTerminal: {
    verb: "POST",
    path: "/terminals/:tid/interrupt",
    args: [{ path: "tid" }],
    response: terminalIdResultSchema,
    summary: "Ctrl-C: SIGINT to the foreground job",
    described: "Interrupted",
  },
  killTerminal: {
    verb: "POST",
    path: "/terminals/:tid/kill",
    args: [{ path: "tid" }, { query: "signal" }],
    query: terminalKillQuerySchema,
    response: terminalKillResultSchema,
    summary: "Signal the terminal's whole process group",
    described: "Signalled",
  },
  waitForTerminal: {
    verb: "GET",
    path: "/terminals/:tid/wait",
    args: [{ path: "tid" }],
    response: terminalInfoSchema,
    key: "terminal",
    summary: "Wait until the program has exited; the final record",
    described: "Exited",
  },
  connectTerminal: {
    verb: "GET",
    path: "/terminals/:tid/ws",
    args: [{ path: "tid" }],
    summary:
      "A viewer's WebSocket (send Upgrade: websocket). From `since` on, binary frames carry output; after each batch a text frame " +
      '{"type":"cursor","cursor":n} gives the cursor to reconnect with; {"type":"truncated","droppedBytes":n} says output asked for is ' +
      'gone; {"type":"exit","exitCode":n} ends it. Binary frames sent are input; {"type":"resize","cols":c,"rows":r} resizes. Closing ' +
      "a viewer leaves the terminal running.",
    signed: true,
    // A WebSocket upgrade, passed through the Durable Object's fetch handler (Workers RPC cannot carry one).
    byHand: ["route", "client", "openapi"],
  },
} as const satisfies Record<string, Binding>;
