/** What the server and the extraction's worker thread say to each other (extract-worker.ts). */
import type { ErrorCode } from "../../protocol/errors.ts";
import type { ExtractLimits, UnpackResult } from "./extract-tree.ts";

export type ToWorker = { start: { workspace: string; limits: ExtractLimits } } | { chunk: Uint8Array } | { end: true };

export type FromWorker =
  | { took: true }
  /** `reusable`: the whole body was read, nothing of this extraction is left in the thread. */
  | { done: UnpackResult; reusable: boolean }
  /** A refusal with its code (a bad or oversized archive, a full disk). */
  | { refused: { code: ErrorCode; message: string; context?: Record<string, unknown> } }
  /** Any other failure: a file error the server turns into its code. */
  | { failed: { message: string; errno?: string } };
