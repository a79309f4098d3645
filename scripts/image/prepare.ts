/**
 * The built image as `npm run test:image` and `npm run bench -- image` both need it: what the machine
 * must have, then the base (made once, kept in buildah's store) and the build of container/Dockerfile
 * as wrangler.toml names it (its steps cached, so a second run takes seconds), and the instance type
 * wrangler.toml deploys it on.
 */
import { ensureBaseImage } from "./base.ts";
import { buildImage, imageSource, instanceTypeOf, wranglerConfig } from "./build.ts";
import { run } from "./command.ts";
import { ensureOsPackages } from "../os-packages/ensure.ts";
import { DEFAULT_INSTANCE_TYPE, INSTANCE_TYPES, isInstanceTypeName, type InstanceTypeName } from "../deploy/instance-types.ts";

/** Why the image cannot be built here, or undefined when it can (missing OS packages are installed first). */
export function imageRequirements(): string | undefined {
  if (process.platform !== "linux") return "it runs on Linux only";
  if (process.getuid?.() !== 0) return "it must run as root (buildah and mmdebstrap build root filesystems)";
  if (!ensureOsPackages(["image"])) return "its OS packages are missing (above)";
  return undefined;
}

/** The certificate authorities npm trusts on this machine, when it is configured with its own. */
function npmCaFile(root: string): string | undefined {
  const value = run("npm", ["config", "get", "cafile"], { cwd: root });
  return value === "" || value === "null" || value === "undefined" ? undefined : value;
}

export interface BuiltImage {
  /** The base image's tag and the built image's id. */
  base: string;
  id: string;
}

/** Makes the base if it is not there yet, then builds the image; `timed` wraps each stage. */
export function buildProjectImage(root: string, work: string, timed: <T>(stage: string, step: () => T) => T = (_, step) => step()): BuiltImage {
  const base = timed("base image", () => ensureBaseImage(root));
  const id = timed("image build", () => buildImage(imageSource(wranglerConfig(root)), base, work, npmCaFile(root)));
  return { base, id };
}

/** The instance type wrangler.toml deploys the image on (the platform's default when it names none). */
export function deployedInstanceType(root: string): InstanceTypeName {
  const name = instanceTypeOf(wranglerConfig(root)) ?? DEFAULT_INSTANCE_TYPE;
  if (!isInstanceTypeName(name)) throw new Error(`wrangler.toml: instance_type "${name}" is not one of ${Object.keys(INSTANCE_TYPES).join(", ")}`);
  return name;
}
