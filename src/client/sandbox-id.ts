import { sandboxIdSchema } from "../../protocol/sandbox.ts";
import { InvalidRequestError } from "../rpc/errors.ts";

/** Throws INVALID_SANDBOX_ID unless `id` is a valid sandbox id. */
export function assertSandboxId(id: unknown): asserts id is string {
  const result = sandboxIdSchema.safeParse(id);
  if (!result.success) {
    throw new InvalidRequestError(`Invalid sandbox id ${JSON.stringify(id)}: ${result.error.issues[0]?.message ?? "malformed"}`, "INVALID_SANDBOX_ID", {
      context: { sandboxId: id },
    });
  }
}
