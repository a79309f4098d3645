/**
 * The image's environment as the local runtime gives it: the ENV lines of the final stage of the
 * Dockerfile the image is built from (container/Dockerfile), read once. A built image's container
 * starts with that environment, and its server passes it on to every command; a local container
 * server is handed the same, so a command sees the same variables locally as in the image.
 *
 * What it reads: `ENV NAME=value …` (values bare, "double" or 'single' quoted, `$NAME` and `${NAME}`
 * standing for what an earlier ENV of the stage set) and the older `ENV NAME value`. Not the base
 * image's own ENV (e.g. Node's NODE_VERSION), which only a built image records.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The Dockerfile the image is built from (wrangler.toml's `image`). */
export const IMAGE_DOCKERFILE = fileURLToPath(new URL("../container/Dockerfile", import.meta.url));

let cached: Record<string, string> | undefined;

/** The ENV of IMAGE_DOCKERFILE's final stage; none (said once on stderr) if it cannot be read. */
export function imageEnv(): Record<string, string> {
  if (cached) return cached;
  try {
    cached = dockerfileEnv(readFileSync(IMAGE_DOCKERFILE, "utf8"));
  } catch (error) {
    console.error(`runtime: commands start without the image's ENV (${IMAGE_DOCKERFILE}: ${(error as Error).message})`);
    cached = {};
  }
  return cached;
}

/** The ENV a Dockerfile's final stage sets, in order (later wins). */
export function dockerfileEnv(text: string): Record<string, string> {
  let env: Record<string, string> = {};
  for (const instruction of instructions(text)) {
    const match = /^(\w+)\s+([\s\S]*)$/.exec(instruction);
    if (!match) continue;
    const keyword = match[1]!.toUpperCase();
    if (keyword === "FROM") env = {};
    if (keyword !== "ENV") continue;
    const rest = match[2]!.trim();
    const legacy = /^([A-Za-z_][A-Za-z0-9_]*)\s+([^=\s][\s\S]*)$/.exec(rest);
    if (legacy && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(rest)) {
      env[legacy[1]!] = expand(legacy[2]!.trim(), env);
      continue;
    }
    for (const [name, value] of assignments(rest)) env[name] = expand(value, env, true);
  }
  return env;
}

/** The instructions, continuation lines joined, comments and blank lines left out. */
function instructions(text: string): string[] {
  const joined: string[] = [];
  let current = "";
  for (const line of text.split("\n")) {
    if (/^\s*(#|$)/.test(line)) continue; // also inside a continued instruction, as the builder reads it
    if (/\\\s*$/.test(line)) {
      current += line.replace(/\\\s*$/, " ");
      continue;
    }
    joined.push((current + line).trim());
    current = "";
  }
  if (current.trim() !== "") joined.push(current.trim());
  return joined;
}

/** `NAME=value` pairs; a quoted value keeps its spaces, its quotes marked for `expand` as \u0000'…'. */
function assignments(text: string): [string, string][] {
  const pairs: [string, string][] = [];
  const pair = /([A-Za-z_][A-Za-z0-9_]*)=((?:"(?:[^"\\]|\\.)*"|'[^']*'|(?:[^\s"'\\]|\\.)+)*)/gy;
  let at = 0;
  while (at < text.length) {
    while (/\s/.test(text[at] ?? "")) at++;
    if (at >= text.length) break;
    pair.lastIndex = at;
    const match = pair.exec(text);
    if (!match) throw new Error(`cannot read the ENV instruction at ${JSON.stringify(text.slice(at, at + 40))}`);
    pairs.push([match[1]!, match[2]!]);
    at = pair.lastIndex;
  }
  return pairs;
}

/** A value with its quotes removed and `$NAME`/`${NAME}` replaced (not within single quotes). */
function expand(value: string, env: Record<string, string>, quoted = false): string {
  if (!quoted) return value.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, braced?: string, bare?: string) => env[(braced ?? bare)!] ?? "");
  let out = "";
  for (const part of value.match(/"(?:[^"\\]|\\.)*"|'[^']*'|\\.|[^"'\\]+/g) ?? []) {
    if (part.startsWith("'")) out += part.slice(1, -1);
    else if (part.startsWith('"')) out += expand(part.slice(1, -1).replace(/\\(.)/g, "$1"), env);
    else if (part.startsWith("\\")) out += part.slice(1);
    else out += expand(part, env);
  }
  return out;
}
