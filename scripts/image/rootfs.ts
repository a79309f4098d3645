/**
 * Opens a built image for running without a container engine: a working container of it, mounted
 * (buildah mount), so its root filesystem is a writable folder whose changes stay in that container's
 * own layer; and the image's process settings (entrypoint, command, environment, working directory),
 * which whoever runs it must apply as an engine would.
 */
import { run } from "./command.ts";

/** What an engine takes from the image to start its process. */
export interface ImageProcess {
  entrypoint: string[];
  cmd: string[];
  /** `NAME=value`, as the image lists them. */
  env: string[];
  workingDir: string;
}

export interface OpenImage extends ImageProcess {
  rootfs: string;
  /** Unmounts and removes the working container. */
  close(): void;
}

interface OciConfig {
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  Env?: string[] | null;
  WorkingDir?: string;
}

export function openImage(tag: string): OpenImage {
  const config = (JSON.parse(run("buildah", ["inspect", "--type", "image", tag])) as { OCIv1: { config?: OciConfig } }).OCIv1.config ?? {};
  const container = run("buildah", ["from", "--pull=never", "--quiet", tag]);
  let rootfs: string;
  try {
    rootfs = run("buildah", ["mount", container]);
  } catch (error) {
    run("buildah", ["rm", container]);
    throw error;
  }
  return {
    rootfs,
    entrypoint: config.Entrypoint ?? [],
    cmd: config.Cmd ?? [],
    env: config.Env ?? [],
    workingDir: config.WorkingDir || "/",
    close() {
      run("buildah", ["umount", container]);
      run("buildah", ["rm", container]);
    },
  };
}
