/** The sandbox id check both clients make before anything goes over the wire. */
import { sandboxIdSchema } from "../../protocol/sandbox.ts";
import { describeValidationError } from "../../protocol/validation.ts";
import { InvalidRequestError } from "../rpc/errors.ts";

/** Throws INVALID_SANDBOX_ID unless `id` is a valid sandbox id. */
export function assertSandboxId(id: unknown): asserts id is string {
  const result = sandboxIdSchema.safeParse(id);
  if (!result.success) {
    const { message, issues } = describeValidationError(result.error, `sandbox id ${JSON.stringify(id)}`);
    throw new InvalidRequestError(message, "INVALID_SANDBOX_ID", { context: { sandboxId: id, issues } });
  }
}
