/** Bucket failures as the caller sees them: the container's own coded errors pass; anything else is BACKUP_FAILED. */
import { errorFromCode, SandboxError } from "../../rpc/errors.ts";

export async function bucketCall<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SandboxError) throw error;
    throw errorFromCode("BACKUP_FAILED", `${what} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
