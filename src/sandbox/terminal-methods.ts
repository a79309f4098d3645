/**
 * The Durable Object's terminal methods (their calls to the container: terminals.ts). A viewer's
 * WebSocket cannot travel over Workers RPC: it reaches connectTerminal through the object's fetch.
 */
import { errorFromResponse } from "../rpc/error-response.ts";
import type { FamilyMethods } from "./shell.ts";
import * as terminals from "./terminals.ts";

export const terminalMethods = {
  createTerminal: (shell, options) => shell.call(({ api }) => terminals.createTerminal(api, options)),

  listTerminals: (shell) => shell.call(({ api }) => terminals.listTerminals(api)),

  getTerminal: (shell, id) => shell.call(({ api }) => terminals.getTerminal(api, id)),

  writeTerminal: (shell, id, data) => shell.call(({ api }) => terminals.writeTerminal(api, id, data)),

  resizeTerminal: (shell, id, cols, rows) => shell.call(({ api }) => terminals.resizeTerminal(api, id, cols, rows)),

  interruptTerminal: (shell, id) => shell.call(({ api }) => terminals.interruptTerminal(api, id)),

  killTerminal: (shell, id, signal) => shell.call(({ api }) => terminals.killTerminal(api, id, signal)),

  waitForTerminal: (shell, id) => shell.call(({ api }) => terminals.waitForTerminal(api, id)),

  terminalOutput: (shell, id, options) => shell.call(({ api }) => terminals.terminalOutput(api, id, options)),

  deleteTerminal: (shell, id) => shell.call(({ api }) => terminals.deleteTerminal(api, id)),

  /** The container's answer to the upgrade: a 101 with the viewer's socket, or its coded error. */
  connectTerminal: (shell, id, request) =>
    shell.call(async () => {
      const response = await terminals.connectTerminal(shell.serverPort(), id, request);
      if (response.status !== 101) throw await errorFromResponse(response);
      return response;
    }),
} satisfies FamilyMethods;
