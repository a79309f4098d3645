/**
 * Paths as the Bridge API names them: absolute (a relative path is taken inside `/workspace`, where
 * the sandbox's workspace is in its container). A path inside `/workspace` becomes the part after it
 * for our calls, which take paths relative to the workspace: this also holds under the local
 * runtime, where each sandbox's workspace is a folder of its own. Files may be anywhere in the
 * sandbox, as our file API allows (the Bridge keeps them to `/workspace`); a working directory stays
 * inside `/workspace`, as the Bridge has it.
 */
import { PathOutsideWorkspaceError } from "../../rpc/errors.ts";

export const BRIDGE_WORKSPACE = "/workspace";

/** The workspace-relative form of a Bridge path ("." for the workspace itself); PATH_OUTSIDE_WORKSPACE when it leaves it. */
export function workspaceRelative(bridgePath: string): string {
  const relative = insideWorkspace(bridgePath);
  if (relative === undefined) {
    throw new PathOutsideWorkspaceError(`${bridgePath}: paths must resolve to a location within ${BRIDGE_WORKSPACE}`, { context: { path: bridgePath } });
  }
  return relative;
}

/** A file's path for our file calls: workspace-relative inside `/workspace`, else absolute (anywhere in the sandbox). */
export function sandboxFilePath(bridgePath: string): string {
  return insideWorkspace(bridgePath) ?? `/${segments(bridgePath).join("/")}`;
}

/** The normalised segments of a Bridge path (relative ones taken inside /workspace; `..` stops at the root). */
function segments(bridgePath: string): string[] {
  const absolute = bridgePath.startsWith("/") ? bridgePath : `${BRIDGE_WORKSPACE}/${bridgePath}`;
  const parts: string[] = [];
  for (const segment of absolute.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") parts.pop();
    else parts.push(segment);
  }
  return parts;
}

function insideWorkspace(bridgePath: string): string | undefined {
  const parts = segments(bridgePath);
  if (parts[0] !== BRIDGE_WORKSPACE.slice(1)) return undefined;
  return parts.length === 1 ? "." : parts.slice(1).join("/");
}
