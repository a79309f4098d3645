/**
 * The code interpreter as it crosses between a caller and the Sandbox Durable Object (Workers RPC)
 * or the Worker's /v1 API (HTTP): the options of each call and the records it returns. Contexts,
 * Executions and events are the protocol's own (protocol/code.ts).
 */
import type { CreateCodeContextInput, DeleteCodeContextResponse, InterruptCodeResponse, RunCodeInput } from "../../protocol/code.ts";
import type { WithoutEnvelope } from "../../protocol/process.ts";

/** Wire options of createCodeContext: language (default python; aliases too), cwd, env, sessionId. */
export type CodeContextOptions = CreateCodeContextInput;

/** Wire options of runCode/runCodeStream (everything of the run request but the code). */
export type RunCodeRequestOptions = Omit<RunCodeInput, "code">;

export type DeleteCodeContextResult = WithoutEnvelope<DeleteCodeContextResponse>;
export type InterruptCodeResult = WithoutEnvelope<InterruptCodeResponse>;
