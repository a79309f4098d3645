/**
 * `npm run test:image`: proves the production image without Docker. Builds container/Dockerfile as
 * `wrangler deploy` does (image/build.ts), on a base made here from Debian's packages and the
 * project's own Node (image/base.ts, kept between runs), then runs container tests against the
 * image's own server, started from its root filesystem under bubblewrap (test/container/image-server.ts).
 *
 * Arguments go to vitest (CI adds its reporters). Needs Linux, root (buildah and mmdebstrap build root filesystems) and the
 * OS packages os-packages/packages.ts declares for it (installed here when missing);
 * the Debian mirrors and the npm registry must be reachable. Prints how long each stage took.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureBaseImage } from "./image/base.ts";
import { buildImage, imageSource, wranglerConfig } from "./image/build.ts";
import { run } from "./image/command.ts";
import { ensureOsPackages } from "./os-packages/ensure.ts";
import { openImage } from "./image/rootfs.ts";
import { TEST_IMAGE_VAR, type ImageDescriptor } from "../test/container/image-server.ts";

/**
 * The container tests that run against the image: parity.test.ts (what a program sees in a sandbox,
 * here through the local runtime on the image's root file system), image.test.ts (what only the image shows: tini as
 * PID 1, its programs), and those that start a server with default settings and speak to it over HTTP only. The others set limits or options of their own, reach into the in-process
 * server, or look for a command's processes in this machine's process table (the image's run in a
 * process namespace of their own): they stay with `npm test`.
 */
const IMAGE_TESTS = [
  "test/container/cloudflare-sdk.test.ts",
  "test/container/code-charts.test.ts",
  "test/container/code-javascript.test.ts",
  "test/container/code-python.test.ts",
  "test/container/exec.test.ts",
  "test/container/image.test.ts",
  "test/container/parity.test.ts",
];

const root = fileURLToPath(new URL("..", import.meta.url));

function requirements(): string | undefined {
  if (process.platform !== "linux") return "it runs on Linux only";
  if (process.getuid?.() !== 0) return "it must run as root (buildah and mmdebstrap build root filesystems)";
  if (!ensureOsPackages(["image"])) return "its OS packages are missing (above)";
  return undefined;
}

/** The certificate authorities npm trusts on this machine, when it is configured with its own. */
function npmCaFile(): string | undefined {
  const value = run("npm", ["config", "get", "cafile"], { cwd: root });
  return value === "" || value === "null" || value === "undefined" ? undefined : value;
}

const timings: [string, number][] = [];
function timed<T>(stage: string, work: () => T): T {
  const start = Date.now();
  try {
    return work();
  } finally {
    timings.push([stage, (Date.now() - start) / 1000]);
  }
}

const unmet = requirements();
if (unmet) {
  console.error(`test:image: ${unmet}`);
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), "edge-sandbox-image-"));
let status = 1;
try {
  const base = timed("base image", () => ensureBaseImage(root));
  const tag = timed("image build", () => buildImage(imageSource(wranglerConfig(root)), base, work, npmCaFile()));
  const image = openImage(tag);
  try {
    const descriptor: ImageDescriptor = {
      rootfs: image.rootfs,
      entrypoint: image.entrypoint,
      cmd: image.cmd,
      env: image.env,
      workingDir: image.workingDir,
    };
    const descriptorFile = join(work, "image.json");
    writeFileSync(descriptorFile, JSON.stringify(descriptor));
    const tests = timed("tests", () =>
      spawnSync(join(root, "node_modules", ".bin", "vitest"), ["run", "--project", "container", ...process.argv.slice(2), ...IMAGE_TESTS], {
        cwd: root,
        stdio: "inherit",
        env: { ...process.env, [TEST_IMAGE_VAR]: descriptorFile },
      }),
    );
    status = tests.status ?? 1;
  } finally {
    image.close();
  }
} catch (error) {
  console.error(`test:image: ${(error as Error).message}`);
} finally {
  rmSync(work, { recursive: true, force: true });
  console.log(`test:image: ${timings.map(([stage, seconds]) => `${stage} ${seconds.toFixed(1)} s`).join(", ")}`);
}
process.exit(status);
