/**
 * Paths as the Bridge API names them: absolute, inside `/workspace` (a relative path is taken inside
 * it), which is where the sandbox's workspace is in its container. Our file and exec calls take paths
 * relative to the sandbox's workspace, so a Bridge path becomes the part after `/workspace`; this
 * also holds under the local runtime, where each sandbox's workspace is a folder of its own.
 */
import { PathOutsideWorkspaceError } from "../../rpc/errors.ts";

export const BRIDGE_WORKSPACE = "/workspace";

/** The workspace-relative form of a Bridge path ("." for the workspace itself); PATH_OUTSIDE_WORKSPACE when it leaves it. */
export function workspaceRelative(bridgePath: string): string {
  const absolute = bridgePath.startsWith("/") ? bridgePath : `${BRIDGE_WORKSPACE}/${bridgePath}`;
  const parts: string[] = [];
  for (const segment of absolute.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") parts.pop();
    else parts.push(segment);
  }
  if (parts[0] !== BRIDGE_WORKSPACE.slice(1)) {
    throw new PathOutsideWorkspaceError(`${bridgePath}: paths must resolve to a location within ${BRIDGE_WORKSPACE}`, { context: { path: bridgePath } });
  }
  return parts.length === 1 ? "." : parts.slice(1).join("/");
}
