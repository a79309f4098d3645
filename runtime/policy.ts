/**
 * The operator's walls, inside which API callers work. The runtime owns them, because it knows the
 * machine: which paths exist and what they resolve to. It is decided here and nowhere else:
 *   - the runtime's isolation mode is a floor: a sandbox may ask for bwrap where the runtime runs
 *     `none`, never for `none` where it runs bwrap;
 *   - host paths a sandbox may mount (read-only or read-write) lie under the operator's allowlist
 *     (SANDBOX_ALLOWED_PATHS; empty by default), after symlinks are resolved;
 *   - raw bubblewrap arguments are the operator's alone (SANDBOX_BWRAP_ARGS of the runtime);
 *   - outbound network is a ceiling: where the operator turns it off (SANDBOX_NETWORK_ALLOWED=0), no
 *     sandbox may ask for `allowNetwork`.
 * The Durable Object asks (POST /isolation/check) when a sandbox's config is saved, so a config
 * outside the walls is refused then; every start checks again, as the policy may have changed since.
 * What the operator sets as defaults (the runtime's own SANDBOX_* isolation variables) is not checked.
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import type { IsolationMode, IsolationRequest } from "../protocol/isolation.ts";
import { ServiceError } from "../server-kit/service-error.ts";

export interface OperatorPolicy {
  /** The lowest isolation a sandbox may run with: the runtime's mode. */
  floor: IsolationMode;
  /** Host directories (and what lies below them) that sandboxes may mount. */
  allowedPaths: readonly string[];
  /** Whether any sandbox may have outbound network (`allowNetwork`). */
  networkAllowed: boolean;
}

/** Throws ISOLATION_NOT_ALLOWED (403) for a request outside the walls, INVALID_REQUEST for a path that does not exist. */
export function checkIsolationRequest(policy: OperatorPolicy, request: IsolationRequest): void {
  if (policy.floor === "bwrap" && request.isolation === "none") {
    throw notAllowed('this runtime confines every sandbox with bwrap: "none" cannot be asked for (the operator sets SANDBOX_ISOLATION)', {
      isolation: "none",
    });
  }
  if (request.bwrapArgs !== undefined && request.bwrapArgs.length > 0) {
    throw notAllowed("bwrapArgs are the operator's (SANDBOX_BWRAP_ARGS of the runtime), not a sandbox's setting", { field: "bwrapArgs" });
  }
  if (!policy.networkAllowed && request.allowNetwork === true) {
    throw notAllowed("this runtime gives no sandbox outbound network: allowNetwork cannot be asked for (the operator sets SANDBOX_NETWORK_ALLOWED)", {
      field: "allowNetwork",
    });
  }
  const roots = policy.allowedPaths.flatMap((root) => {
    const real = realOrUndefined(root);
    return real === undefined ? [] : [real];
  });
  for (const field of ["readOnlyPaths", "readWritePaths"] as const) {
    for (const asked of request[field] ?? []) {
      const real = realOrUndefined(asked);
      if (real === undefined) throw new ServiceError("INVALID_REQUEST", `${field}: ${asked} does not exist on this machine`, { field, path: asked });
      if (!roots.some((root) => isInside(real, root))) {
        throw notAllowed(`${field}: ${asked} is not under a path the operator allows sandboxes to mount (SANDBOX_ALLOWED_PATHS)`, {
          field,
          path: asked,
        });
      }
    }
  }
}

function notAllowed(message: string, context: Record<string, unknown>): ServiceError {
  return new ServiceError("ISOLATION_NOT_ALLOWED", message, context);
}

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

function isInside(p: string, root: string): boolean {
  const relative = path.relative(root, p);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}
