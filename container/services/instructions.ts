/**
 * A short description of the sandbox for an agent's tool prompt: where to work, what walls there
 * are, what programs exist. Plain sentences, a handful of lines, true for this server right now.
 */
import path from "node:path";
import type { IsolationInEffect } from "../../protocol/isolation.ts";
import { findExecutable } from "../../server-kit/executables.ts";

/** Programs worth telling an agent about, when they are on PATH. */
const NOTABLE_TOOLS = ["bash", "python3", "pip3", "node", "npm", "git", "curl", "wget", "jq", "rg", "make", "gcc", "tar", "unzip", "sqlite3"];

export function describeSandbox(options: {
  workspace: string;
  isolation: IsolationInEffect;
  /** PATH of commands. */
  path: string;
  /** Whether commands can see a directory of PATH (under isolation, not all of them are mounted). */
  visible: (dir: string) => boolean;
}): string {
  const { workspace, isolation } = options;
  const searchPath = options.path.split(path.delimiter).filter((dir) => dir !== "" && options.visible(dir));
  const tools = NOTABLE_TOOLS.filter((tool) => findExecutable(tool, searchPath) !== undefined);
  const lines = [
    `You are working in a sandbox. Your working directory is ${workspace}; relative paths in file operations resolve there.`,
  ];
  if (isolation.mode === "bwrap") {
    const writable = [workspace, ...isolation.readWritePaths, "/tmp (private to this sandbox)"].join(", ");
    lines.push(`Commands run isolated (bubblewrap): you can write only to ${writable}; system directories are read-only.`);
    if (isolation.readOnlyPaths.length > 0) lines.push(`Also readable: ${isolation.readOnlyPaths.join(", ")}.`);
    lines.push("Commands see only their own processes.");
  } else {
    lines.push("Commands run without extra isolation; file operations are limited to the workspace.");
  }
  lines.push(isolation.allowNetwork ? "Network access is available." : "There is no network access: downloads and package installs will fail.");
  lines.push(tools.length > 0 ? `Available tools include: ${tools.join(", ")}.` : "Only basic shell tools are available.");
  lines.push("Commands run in one session, as in a shell: the working directory, exported variables, functions, aliases and shell options carry over from one command to the next (isolated: true runs one in a fresh shell).");
  return lines.join("\n");
}
