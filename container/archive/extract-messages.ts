/** What the server and an extraction's worker thread say to each other (extract-worker.ts). */
import type { ErrorCode } from "../../protocol/errors.ts";
import type { UnpackResult } from "./extract-tree.ts";

export type ToWorker = { chunk: Uint8Array } | { end: true };

export type FromWorker =
  | { took: true }
  | { done: UnpackResult }
  /** A refusal with its code (a bad or oversized archive, a full disk). */
  | { refused: { code: ErrorCode; message: string; context?: Record<string, unknown> } }
  /** Any other failure: a file error the server turns into its code. */
  | { failed: { message: string; errno?: string } };
