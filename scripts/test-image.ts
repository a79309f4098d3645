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
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openImage } from "./image/rootfs.ts";
import { buildProjectImage, deployedInstanceType, imageRequirements } from "./image/prepare.ts";
import { imageSize, megabytes } from "./image/size.ts";
import { INSTANCE_TYPES } from "./deploy/instance-types.ts";
import { TEST_IMAGE_VAR, type ImageDescriptor, type ImageInstance } from "../test/container/image-server.ts";

/**
 * The container tests that run against the image: parity.test.ts (what a program sees in a sandbox,
 * here through the local runtime on the image's root file system), image.test.ts (what only the image shows: tini as
 * PID 1, its programs), image-instance.test.ts (the image's server within its instance type's memory),
 * and those that start a server with default settings and speak to it over HTTP only. The others set limits or options of their own, reach into the in-process
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
  "test/container/image-instance.test.ts",
  "test/container/parity.test.ts",
];

const root = fileURLToPath(new URL("..", import.meta.url));

/** The instance type wrangler.toml deploys the image on, with what the tests hold it to. */
function deployedInstance(): ImageInstance {
  const name = deployedInstanceType(root);
  return { name, memoryBytes: INSTANCE_TYPES[name].memoryBytes, vcpu: INSTANCE_TYPES[name].vcpu };
}

/** The image's size beside its base's, layer by layer, and the figures the tests left in `reportFile`. */
function printReport(image: string, base: string, reportFile: string): void {
  const size = imageSize(image);
  console.log(`test:image: the image is ${megabytes(size.bytes)} (its base ${megabytes(imageSize(base).bytes)}); its layers:`);
  for (const layer of size.layers) console.log(`  ${megabytes(layer.bytes).padStart(7)}  ${layer.step}`);
  if (!existsSync(reportFile)) return;
  for (const line of readFileSync(reportFile, "utf8").trim().split("\n").filter(Boolean)) {
    const figure = JSON.parse(line) as Record<string, number | string>;
    if (figure.figure === "start-up") console.log(`test:image: start-up: listening after ${figure.readyMs} ms, first command's result after ${figure.firstCommandMs} ms`);
    if (figure.figure === "memory") {
      const mib = (bytes: unknown) => `${Math.round(Number(bytes) / 1024 ** 2)} MiB`;
      console.log(`test:image: memory high-water mark on ${figure.instance}: ${mib(figure.peakBytes)} of ${mib(figure.limitBytes)}`);
    }
  }
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

const unmet = imageRequirements();
if (unmet) {
  console.error(`test:image: ${unmet}`);
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), "edge-sandbox-image-"));
let status = 1;
try {
  const { base, id } = buildProjectImage(root, work, timed);
  const image = openImage(id);
  const reportFile = join(work, "report.jsonl");
  try {
    const descriptor: ImageDescriptor = {
      rootfs: image.rootfs,
      entrypoint: image.entrypoint,
      cmd: image.cmd,
      env: image.env,
      workingDir: image.workingDir,
      instance: deployedInstance(),
      reportFile,
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
    printReport(id, base, reportFile);
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
