/**
 * Runs the server from plain JavaScript instead of TypeScript sources.
 *
 * Why: Node strips types in-process with a WebAssembly compiler that stays resident (~40 MB RSS).
 * Every spawn forks the server, and fork time grows with the parent's resident memory, so that
 * compiler alone made each command start ~3 ms slower on the machines we measured. Stripping the
 * sources once into a JS tree (cached by content hash, written atomically so several servers can
 * start at once) and re-executing on it gives a lean server process.
 *
 * Only erasable syntax is allowed in the project, so stripping is the whole compile; relative
 * `.ts` import specifiers are rewritten to `.js`.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SOURCE_DIRS = ["container", "server-kit", "protocol"];
/** Under node_modules, so bare imports (zod) resolve from the compiled tree exactly as from the sources. */
const CACHE_DIR = join(ROOT, "node_modules", ".cache", "sandbox-container");

/** Files the server reads at run time rather than imports (the code interpreter's drivers): copied as they are. */
const ASSET_EXTENSIONS = [".py", ".cjs"];

/** `from "./x.ts"`, `import "./x.ts"`, `import("./x.ts")` → `.js` (relative specifiers only). */
const RELATIVE_TS_SPECIFIER = /((?:\bfrom|\bimport)\s*\(?\s*)(["'])(\.{1,2}\/[^"'\n]*?)\.ts\2/g;

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") && !entry.name.endsWith(".test.ts")) files.push(path);
    else if (ASSET_EXTENSIONS.some((extension) => entry.name.endsWith(extension))) files.push(path);
  }
  return files.sort();
}

/** Compiles (or reuses) the JS tree; returns the path of the compiled entry point. */
export function precompile(entry = "container/main.ts"): string {
  const files = SOURCE_DIRS.flatMap((dir) => sourceFiles(join(ROOT, dir)));
  const hash = createHash("sha256");
  const sources = new Map<string, string>();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    sources.set(file, text);
    hash.update(relative(ROOT, file)).update("\0").update(text).update("\0");
  }
  const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version?: string }).version ?? "0.0.0";
  hash.update(version).update(process.version);
  const outDir = join(CACHE_DIR, hash.digest("hex").slice(0, 16));
  const compiledEntry = join(outDir, entry.replace(/\.ts$/, ".js"));
  if (existsSync(compiledEntry)) return compiledEntry;

  const staging = `${outDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  for (const [file, text] of sources) {
    const asset = !file.endsWith(".ts");
    const js = asset ? text : stripTypeScriptTypes(text, { mode: "strip" }).replace(RELATIVE_TS_SPECIFIER, "$1$2$3.js$2");
    const target = join(staging, relative(ROOT, file)).replace(/\.ts$/, ".js");
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, js);
  }
  writeFileSync(join(staging, "package.json"), JSON.stringify({ type: "module", version, private: true }));
  try {
    renameSync(staging, outDir);
  } catch (error) {
    // Another server finished the same tree first: use theirs.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(compiledEntry)) throw error;
  }
  try {
    pruneOldTrees(outDir);
  } catch {
    // Another server is pruning or compiling at the same time: leave it to them.
  }
  return compiledEntry;
}

/** Each source change makes a new tree; drop old ones (a day old and not among the newest few). */
function pruneOldTrees(keep: string): void {
  const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
  const trees = readdirSync(CACHE_DIR)
    .map((name) => join(CACHE_DIR, name))
    .map((path) => ({ path, mtime: statSync(path).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const { path, mtime } of trees.slice(4)) {
    if (path !== keep && mtime < dayAgo) rmSync(path, { recursive: true, force: true });
  }
}

// `node container/boot/precompile.ts` warms the cache (the image does this at build time).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(precompile());
}
