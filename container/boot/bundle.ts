/**
 * Builds the container server into a bundle: a folder the server runs from, here and in the image.
 *
 * Why: loading the server as a tree of ~270 ES modules (its own, zod's, ws's, tar's) is most of its
 * start-up: resolving and linking them one by one costs far more than running them, and on a
 * quarter of a CPU that is most of a second. Bundled, the server is a few files. It is split once,
 * at main's dynamic import of the server: the first process (which only scrubs its environment and
 * re-executes itself, main.ts) then reads a few kilobytes, not the whole server.
 *
 * The folder, laid out as the image's /app:
 *   package.json              `"type": "module"` and the version the server reports
 *   container/main.js         the entry, with its chunks beside it
 *   container/server.blob     the server's startup snapshot, which the start script starts (snapshot.ts)
 *   container/extract-worker.js  the worker thread archives are extracted in
 *   container/start.sh        the image's command: main.js with a scrubbed environment (start-script.ts)
 *   container/<asset>         the files the server reads or runs at run time (server-assets.ts)
 *   node_modules/             only what cannot be bundled: the PTY library and its native binary
 *   container/THIRD-PARTY-LICENSES.txt  the licenses of the packages bundled in
 *
 * `bundleServer()` makes it once per content (a hash of the sources, the lockfile and the tools, under
 * node_modules/.cache, written atomically so several servers can start at once): the local runtime
 * and `npm run container` run from there. `node container/boot/bundle.ts <folder>` makes it in a
 * folder of its own (the image's build).
 */
import { createHash, randomUUID } from "node:crypto";
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BUNDLE_ENTRY, BUNDLE_START_SCRIPT } from "../../server-kit/bundle-layout.ts";
import { EXTRACT_WORKER_ENTRY } from "../archive/extract-off-loop.ts";
import { SERVER_ASSETS } from "../server-assets.ts";
import { licenseNotices } from "./license-notices.ts";
import { buildSnapshot } from "./snapshot.ts";
import { startScript } from "./start-script.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SOURCE_DIRS = ["container", "server-kit", "protocol"];
/** Under node_modules, so a container that binds the checkout's node_modules finds it. */
const CACHE_DIR = join(ROOT, "node_modules", ".cache", "sandbox-container");
const ENTRY = "container/main.ts";
/** Programs of their own beside the entry: worker threads the server starts by file (their name there: source). */
const WORKER_ENTRIES = { [EXTRACT_WORKER_ENTRY]: "container/archive/extract-worker.ts" };

/**
 * Packages left out of the bundle, shipped beside it with what they depend on (as installed: an
 * optional dependency for another platform is not). The PTY library loads a native binary.
 */
const UNBUNDLED_PACKAGES = ["@lydell/node-pty"];
/** Optional natives ws looks for and does without: not installed, not shipped. */
const ABSENT_OPTIONAL_PACKAGES = ["bufferutil", "utf-8-validate"];

/** CommonJS packages in an ES module bundle still call require() for Node's own modules. */
const REQUIRE_SHIM = 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);';

type Esbuild = typeof import("esbuild");
type EsbuildPlugin = import("esbuild").Plugin;

/**
 * zod's error messages in English only, its default (the server never picks another locale): zod's
 * namespace object keeps every one of its 60-odd translations in a bundle, and they were half of what
 * zod added to it (about 360 KB to parse at every start, some 10 ms of CPU). Where zod lays its
 * locales out otherwise, nothing matches and the bundle keeps them all.
 */
const englishOnlyZod: EsbuildPlugin = {
  name: "english-only-zod",
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (file) => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: "js",
      resolveDir: dirname(file.path),
    }));
  },
};

/**
 * esbuild, resolved as CommonJS does, so NODE_PATH can point at it where it is installed apart from
 * the project (the image's build stage installs the project's runtime dependencies only).
 */
function loadEsbuild(): Esbuild {
  return createRequire(import.meta.url)("esbuild") as Esbuild;
}

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (!entry.name.endsWith(".test.ts") && !entry.name.endsWith(".d.ts")) files.push(path);
  }
  return files.sort();
}

function projectVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version?: string }).version ?? "0.0.0";
}

/** What the bundle is made of: when any of it changes, the cached bundle is made again. */
function contentHash(esbuild: Esbuild): string {
  const hash = createHash("sha256");
  for (const file of [...SOURCE_DIRS.flatMap((dir) => sourceFiles(join(ROOT, dir))), join(ROOT, "package-lock.json")]) {
    if (!existsSync(file)) continue;
    hash.update(relative(ROOT, file)).update("\0").update(readFileSync(file)).update("\0");
  }
  return hash.update(projectVersion()).update(process.version).update(esbuild.version).digest("hex").slice(0, 16);
}

/** Builds under way in this process, by folder: callers at the same time share one. */
const building = new Map<string, Promise<string>>();

/** The bundle's folder (made now when it is not there yet); its entry is BUNDLE_ENTRY inside it. */
export async function bundleServer(): Promise<string> {
  const esbuild = loadEsbuild();
  const outDir = join(CACHE_DIR, contentHash(esbuild));
  if (existsSync(join(outDir, BUNDLE_ENTRY))) return outDir;
  let made = building.get(outDir);
  if (!made) {
    made = makeBundle(esbuild, outDir).finally(() => building.delete(outDir));
    building.set(outDir, made);
  }
  return made;
}

async function makeBundle(esbuild: Esbuild, outDir: string): Promise<string> {
  const staging = `${outDir}.tmp-${process.pid}-${randomUUID()}`;
  try {
    await buildBundle(esbuild, staging);
    renameSync(staging, outDir);
  } catch (error) {
    // Another server finished the same bundle first: use theirs.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(outDir, BUNDLE_ENTRY))) throw error;
  } finally {
    // esbuild's service is a child process: a runtime that bundled once keeps none around.
    await esbuild.stop();
  }
  try {
    pruneOldBundles(outDir);
  } catch {
    // Another server is pruning or bundling at the same time: leave it to them.
  }
  return outDir;
}

/** Writes the bundle's folder at `outDir` (emptied first). */
export async function buildBundle(esbuild: Esbuild, outDir: string): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  const containerDir = join(outDir, "container");
  const target = `node${process.versions.node.split(".")[0]}`;
  const external = [...UNBUNDLED_PACKAGES, ...ABSENT_OPTIONAL_PACKAGES];
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { main: ENTRY, ...WORKER_ENTRIES },
    outdir: containerDir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target,
    external,
    banner: { js: REQUIRE_SHIM },
    chunkNames: "[name]-[hash]",
    // V8 keeps every module's source for as long as the server runs (to compile a function on its
    // first call), and a source with one character beyond Latin-1 (a comment's arrow) takes two bytes
    // a character: without comments and whitespace, the sources are a third of what they were.
    // Names are kept, so stack traces still read.
    minifyWhitespace: true,
    plugins: [englishOnlyZod],
    metafile: true,
    logLevel: "error",
  });
  for (const path of Object.values(SERVER_ASSETS)) {
    mkdirSync(dirname(join(containerDir, path)), { recursive: true });
    cpSync(join(ROOT, "container", path), join(containerDir, path));
  }
  writeFileSync(join(outDir, BUNDLE_START_SCRIPT), startScript());
  chmodSync(join(outDir, BUNDLE_START_SCRIPT), 0o755);
  writeFileSync(join(outDir, "package.json"), `${JSON.stringify({ type: "module", version: projectVersion(), private: true })}\n`);
  const modules = join(ROOT, "node_modules");
  for (const name of packageClosure(modules, UNBUNDLED_PACKAGES)) {
    cpSync(join(modules, name), join(outDir, "node_modules", name), { recursive: true, dereference: false });
  }
  writeFileSync(join(containerDir, "THIRD-PARTY-LICENSES.txt"), licenseNotices(modules, Object.keys(result.metafile.inputs)));
  // Last: the snapshot's program reads the bundle's manifest when it loads.
  await buildSnapshot(esbuild, outDir, { root: ROOT, target, external, plugins: [englishOnlyZod] });
}

/** `names` and what they depend on, as installed at `modules` (npm hoists them to the top). */
export function packageClosure(modules: string, names: readonly string[]): string[] {
  const wanted = [...names];
  const found = new Set<string>();
  while (wanted.length > 0) {
    const name = wanted.pop()!;
    if (found.has(name) || !existsSync(join(modules, name, "package.json"))) continue; // an optional one not for this platform
    found.add(name);
    const own = JSON.parse(readFileSync(join(modules, name, "package.json"), "utf8")) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
    wanted.push(...Object.keys(own.dependencies ?? {}), ...Object.keys(own.optionalDependencies ?? {}));
  }
  return [...found].sort();
}

/** Each source change makes a new bundle; drop old ones (a day old and not among the newest few). */
function pruneOldBundles(keep: string): void {
  const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
  const bundles = readdirSync(CACHE_DIR)
    .map((name) => join(CACHE_DIR, name))
    .map((path) => ({ path, mtime: statSync(path).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const { path, mtime } of bundles.slice(4)) {
    if (path !== keep && mtime < dayAgo) rmSync(path, { recursive: true, force: true });
  }
}

// `node container/boot/bundle.ts <folder>` makes the bundle there (the image's build); with no folder,
// it makes the cached one and prints its entry.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = process.argv[2];
  if (target) await buildBundle(loadEsbuild(), resolve(target));
  else console.log(join(await bundleServer(), BUNDLE_ENTRY));
}
