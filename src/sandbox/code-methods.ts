/**
 * The Durable Object's code interpreter methods (their calls to the container: code.ts). A run named
 * by an idempotency key is claimed before it is sent; a streamed run keeps the container awake while
 * it is open and ends with a coded error event if the container goes away under it.
 */
import * as code from "./code.ts";
import type { FamilyMethods } from "./shell.ts";

export const codeMethods = {
  createCodeContext: (shell, options) => shell.call(({ api }) => code.createCodeContext(api, options)),

  listCodeContexts: (shell) => shell.call(({ api }) => code.listCodeContexts(api)),

  getCodeContext: (shell, id) => shell.call(({ api }) => code.getCodeContext(api, id)),

  deleteCodeContext: (shell, id) => shell.call(({ api }) => code.deleteCodeContext(api, id)),

  restartCodeContext: (shell, id) => shell.call(({ api }) => code.restartCodeContext(api, id)),

  /** A cell may run long: while it does, the container stays awake as it does for an open stream. */
  runCode: (shell, source, options) => shell.call(({ api }) => code.runCode(api, source, options), { key: options?.idempotencyKey }),

  runCodeStream: (shell, source, options) =>
    shell.call(async (link) => shell.guardEvents(await code.runCodeStream(link.api, source, options), link), { key: options?.idempotencyKey }),

  /** A broken runCodeStream picks up here, from its last event id. */
  resumeCodeStream: (shell, executionId, options = {}) =>
    shell.call(async (link) => shell.guardEvents(await code.resumeCodeStream(link.api, executionId, options), link)),

  interruptCode: (shell, executionId) => shell.call(({ api }) => code.interruptCode(api, executionId)),
} satisfies FamilyMethods;
