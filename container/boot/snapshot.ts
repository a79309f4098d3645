/**
 * Makes the image's startup snapshot: the server's modules loaded (compiled, their top levels run,
 * a first command's schemas built) and saved as a V8 heap, which Node restores at start instead of
 * loading them (`node --snapshot-blob server.blob main.js`, the start script's command).
 *
 * Why: a server started from its bundle ran ~560 M instructions until it listened, a bare Node server
 * ~195 M; most of the difference is loading (Node's ES module loader, compiling the bundle, Node's own
 * modules, zod building the schemas), which a snapshot does once, where the bundle is made.
 *
 * What a snapshot asks of the code it holds:
 * - one CommonJS script that loads only Node's own modules, and not all of them (node:http cannot be
 *   in one): so its own esbuild build, in one file, and node:http required where it is first used;
 * - no `import()` at run time (a restored process has no ES module loader for it), so the one package
 *   left out of the bundle, the PTY library, is required from the bundle's node_modules instead;
 * - nothing that depends on where the bundle lies, taken at load: `import.meta.url` stands for main.js
 *   in the folder the process runs from (its argv[1], set again when the snapshot is restored), and
 *   paths of the server's files are worked out when used;
 * - no handles (timers, sockets, watchers) open at load, and no environment read at load.
 * Node restores only a snapshot made by the same version of Node: the image's build stage, which makes
 * it, runs the image's Node.
 *
 * Made without Node's code cache (`withoutCodeCache`): by default a snapshot carries compiled code of
 * every one of Node's own modules, and a restored process copies all of the snapshot into memory of
 * its own, where Node's default snapshot is read from its binary, shared by every Node process. Without
 * it, an idle server holds ~4.9 MiB less of its own; the few of Node's modules it loads after the
 * restore (node:http among them) are compiled from their source instead: ~3% more instructions until
 * it listens, and 10-15 ms more CPU for its first command (docs/benchmarks.md weighs the two).
 */
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUNDLE_SNAPSHOT } from "../../server-kit/bundle-layout.ts";

type Esbuild = typeof import("esbuild");
type EsbuildPlugin = import("esbuild").Plugin;

const SNAPSHOT_ENTRY = "container/boot/snapshot-entry.ts";
/** Beside main.js while the snapshot is made, so `import.meta.url` points at the same folder then as later. */
const SNAPSHOT_SCRIPT = "container/snapshot-entry.cjs";
/** The snapshot's build configuration, beside it while it is made. */
const SNAPSHOT_CONFIG = "container/snapshot-config.json";
const PTY_PACKAGE = "@lydell/node-pty";

/**
 * `import.meta.url` of every module in the snapshot: main.js's, in the folder the process runs from.
 * The require() of a snapshot's script loads Node's own modules only.
 */
const ENTRY_URL_BANNER = [
  'let __bundleEntryUrl = require("node:url").pathToFileURL(process.argv[1]).href;',
  'require("node:v8").startupSnapshot.addDeserializeCallback(() => { __bundleEntryUrl = require("node:url").pathToFileURL(process.argv[1]).href; });',
].join("\n");

/** The PTY library, required from the bundle's node_modules when a terminal first needs it. */
const ptyFromBundle: EsbuildPlugin = {
  name: "pty-from-bundle",
  setup(build) {
    build.onResolve({ filter: new RegExp(`^${PTY_PACKAGE.replace("/", "\\/")}$`) }, () => ({ path: PTY_PACKAGE, namespace: "pty-from-bundle" }));
    build.onLoad({ filter: /.*/, namespace: "pty-from-bundle" }, () => ({
      contents: `module.exports = require("node:module").createRequire(__bundleEntryUrl)(${JSON.stringify(PTY_PACKAGE)});`,
      loader: "js",
    }));
  },
};

/** What the snapshot's build shares with the bundle's. */
export interface SnapshotBuildOptions {
  root: string;
  target: string;
  /** Packages neither bundle holds (other than the PTY library, which this build requires from the bundle's node_modules). */
  external: string[];
  plugins: EsbuildPlugin[];
}

/** Writes BUNDLE_SNAPSHOT into the bundle's folder `outDir` (its main.js and package.json already there). */
export async function buildSnapshot(esbuild: Esbuild, outDir: string, options: SnapshotBuildOptions): Promise<void> {
  const script = join(outDir, SNAPSHOT_SCRIPT);
  const config = join(outDir, SNAPSHOT_CONFIG);
  try {
    await esbuild.build({
      absWorkingDir: options.root,
      entryPoints: [SNAPSHOT_ENTRY],
      outfile: script,
      bundle: true,
      format: "cjs",
      platform: "node",
      target: options.target,
      external: options.external.filter((name) => name !== PTY_PACKAGE),
      define: { "import.meta.url": "__bundleEntryUrl" },
      banner: { js: ENTRY_URL_BANNER },
      plugins: [...options.plugins, ptyFromBundle],
      // A restored server holds its script's source twice (in the heap, for functions compiled on
      // first call, and in the snapshot's data): without its whitespace that is 2.3 MiB less of its
      // own memory. Names are kept, so stack traces still read.
      minifyWhitespace: true,
      logLevel: "error",
    });
    // Node warns that some of its modules are not verified in snapshots; the bundle's tests run the server from it.
    writeFileSync(config, JSON.stringify({ builder: script, withoutCodeCache: true }));
    const made = spawnSync(process.execPath, ["--no-warnings", "--snapshot-blob", join(outDir, BUNDLE_SNAPSHOT), "--build-snapshot-config", config], {
      cwd: outDir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      encoding: "utf8",
    });
    if (made.status !== 0) throw new Error(`the server's startup snapshot could not be made (${made.status ?? made.signal}): ${made.stderr.slice(-2000)}`);
  } finally {
    rmSync(script, { force: true });
    rmSync(config, { force: true });
  }
}
