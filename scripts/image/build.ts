/**
 * Builds the container image the way `wrangler deploy` does: the Dockerfile and build context named
 * by wrangler.toml's [[containers]] entry, the Dockerfile given on stdin (`-f -`, so the context's
 * .dockerignore applies), for linux/amd64. buildah stands in for Docker, with chroot isolation (no
 * container engine needed); the one difference is BASE_IMAGE, the locally made base (base.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { run } from "./command.ts";

export const IMAGE_TAG = "localhost/edge-sandbox-test:latest";

export interface ImageSource {
  dockerfile: string;
  context: string;
}

/** A string setting of wrangler.toml's [[containers]] entry. */
function containerSetting(wranglerToml: string, key: string): string | undefined {
  const text = readFileSync(wranglerToml, "utf8");
  const block = /^\[\[containers\]\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(text)?.[1];
  return block ? new RegExp(`^\\s*${key}\\s*=\\s*"([^"]*)"`, "m").exec(block)?.[1] : undefined;
}

/** The instance type wrangler.toml's [[containers]] entry names, if any. */
export function instanceTypeOf(wranglerToml: string): string | undefined {
  return containerSetting(wranglerToml, "instance_type");
}

/** The Dockerfile and context wrangler builds, as wrangler.toml names them (paths relative to it). */
export function imageSource(wranglerToml: string): ImageSource {
  const value = (key: string) => containerSetting(wranglerToml, key);
  const image = value("image");
  if (!image || !/Dockerfile/.test(image)) throw new Error(`${wranglerToml}: [[containers]] image does not name a Dockerfile`);
  const base = dirname(wranglerToml);
  const dockerfile = resolve(base, image);
  // wrangler's default context is the Dockerfile's folder.
  const context = resolve(base, value("image_build_context") ?? dirname(image));
  return { dockerfile, context };
}

/** Where the build's RUN steps see this machine's certificate authorities, and npm's config naming them. */
const BUILD_CA = "/run/build-ca.crt";
const BUILD_NPMRC = "/usr/local/etc/npmrc";

/**
 * Builds the image from `source` on `baseImage`; returns its id (the tag names whichever build came
 * last, and several checkouts may build on one machine). `--layers` keeps each step's result,
 * so a rebuild after a change to the server's sources starts at the first COPY of them.
 *
 * `caFile`: certificate authorities npm must trust on this machine (a TLS-inspecting egress). They
 * are mounted for the RUN steps only, with a global npmrc naming them: their content never enters the
 * image (buildah leaves the two mount points behind as empty files, as it does /etc/hosts).
 */
export function buildImage(source: ImageSource, baseImage: string, work: string, caFile?: string): string {
  const idFile = join(work, "image-id");
  const trust: string[] = [];
  if (caFile !== undefined) {
    const npmrc = join(work, "npmrc");
    writeFileSync(npmrc, `cafile=${BUILD_CA}\n`);
    trust.push("--volume", `${caFile}:${BUILD_CA}:ro`, "--volume", `${npmrc}:${BUILD_NPMRC}:ro`);
  }
  run(
    "buildah",
    [
      "build",
      "--isolation", "chroot",
      "--layers",
      "--pull=never",
      "--platform", "linux/amd64",
      "--build-arg", `BASE_IMAGE=${baseImage}`,
      ...trust,
      "-t", IMAGE_TAG,
      "--iidfile", idFile,
      "-f", "-",
      source.context,
    ],
    { stdinFile: source.dockerfile, show: true },
  );
  return readFileSync(idFile, "utf8").trim().replace(/^sha256:/, "");
}

/** wrangler.toml at the repository root. */
export function wranglerConfig(root: string): string {
  return join(root, "wrangler.toml");
}
