/**
 * A sandbox's disk: everything its container can write on the host (its workspace, its writable
 * layer: `/`, /tmp, /root, /home, /var, …, and its server's log) lives on a file system of its own,
 * an ext4 image of `SANDBOX_DISK_MAX` bytes mounted over the sandbox's folder. A sandbox that fills
 * it gets ENOSPC; the disk the service and the other sandboxes write on keeps what the image has not
 * taken, whatever that disk's file system is and whether or not it keeps blocks for root.
 *
 * The image is a sparse file in the data folder (`.disks/<sandbox>.img`): it takes on the host only
 * what the sandbox holds (what it deletes goes back, but for the metadata it touched), and it
 * persists, so a restarted container finds its workspace as it was left. It is mounted while the
 * sandbox's container runs and unmounted when it exits. A warm container boots on a disk of its own,
 * which becomes the sandbox's when it adopts it; a sandbox that has a disk starts on it, cold.
 *
 * Mounting needs root (and a kernel with loop devices); elsewhere sandboxes write on the data folder's
 * disk as before, and the runtime says so when it starts. Why an image and not a quota on the data
 * folder: project quotas need the host's file system made and mounted with them (ext4 `-O project`
 * unmounted, XFS `prjquota`), which an ordinary host does not have, and a size-limited tmpfs spends
 * memory and loses the workspace with the container. mkfs and mount cost tens of milliseconds at a
 * cold start (run as child processes the runtime waits for, never blocking it); a warm container has
 * paid them already.
 *
 * Many sandboxes together: the images are sparse, so the disks of every sandbox that may run can add
 * up to more than the host's disk has. Each mounted disk is held to a limit that grows as its
 * sandbox writes, while the host has room, and the data folder's file system keeps free what every
 * mounted disk may still take up to its limit, and the service's reserve besides (disk-promises.ts,
 * disk-allowance.ts): a disk is mounted only if it keeps that with this one's first PROMISED_BYTES
 * (else the start is INSUFFICIENT_STORAGE, 507, before the host fills), and a sandbox that writes
 * past what the host can give meets ENOSPC in its own disk while the others and the service go on.
 */
import { execFile, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, rmdirSync, truncateSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { ServiceError } from "../../server-kit/service-error.ts";
import { findExecutable } from "../../server-kit/executables.ts";
import { DiskAllowance, unescapeMountPath } from "./disk-allowance.ts";
import { DiskPromises } from "./disk-promises.ts";

/** Folder of the data folder holding the images, root's alone. */
export const DISKS_DIR = ".disks";

/**
 * Kept for root on each image: the runtime makes the container's layer anew at every start (as root),
 * so a sandbox that filled its disk can still start, and free space.
 */
const ROOT_RESERVE_BYTES = 8 * 1024 ** 2;

/**
 * Options of every mount: no setuid file and no device node on it means anything to the host.
 * discard: what a sandbox deletes is given back to the host's disk (the image is sparse again there).
 * noinit_itable: the image is sparse, its inode tables read as zeros already; the kernel would
 * otherwise write them out in the background, taking tens of megabytes of the host's disk per sandbox.
 */
const MOUNT_OPTIONS = "loop,nosuid,nodev,noinit_itable,discard";

/**
 * Room a running sandbox has ahead of what its disk uses, while the host has it: the step its
 * disk's limit is raised by as it writes, and what each disk is promised at least when it is
 * mounted (a disk this small or smaller is promised whole). Enough for a sandbox's work between two
 * looks of the watch at page-cache speed, small enough that fifty sandboxes at once are promised
 * about 20 GiB (this and what of their disks' metadata is yet to be written), not their whole 200 GiB.
 */
export const PROMISED_BYTES = 256 * 1024 ** 2;

const SYSTEM_DIRS = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

/** A mounted disk: where it is mounted, and whether it is the sandbox's to keep or a warm container's to throw away. */
export class SandboxDisk {
  #disks: SandboxDisks;
  #dir: string;
  #name: string;
  #mounted = true;

  constructor(disks: SandboxDisks, dir: string, name: string) {
    this.#disks = disks;
    this.#dir = dir;
    this.#name = name;
  }

  /** A warm container's disk becomes sandbox `name`'s, mounted at `dir` (which must hold nothing worth keeping). */
  async adopt(dir: string, name: string): Promise<void> {
    clearFolder(dir);
    renameSync(this.#disks.imagePath(this.#name), this.#disks.imagePath(name));
    this.#disks.promises.recount(this.#disks.imagePath(this.#name), { image: this.#disks.imagePath(name), dir });
    // One child for both: the disk is mounted at its new place, then detached from its old one.
    await run("sh", ["-c", 'mount --bind "$1" "$2" && umount --lazy "$1"', "sh", this.#dir, dir], "move a disk");
    rmdirSync(this.#dir);
    this.#dir = dir;
    this.#name = name;
  }

  /**
   * Unmounts it, once its container has exited: lazily, as what the container's processes still
   * hold lets go after. A warm container's disk, never a sandbox's, is removed with it.
   */
  release(): void {
    if (!this.#mounted) return;
    this.#mounted = false;
    unmount(this.#dir);
    this.#disks.promises.recount(this.#disks.imagePath(this.#name));
    if (this.#name.startsWith(".warm-")) rmSync(this.#disks.imagePath(this.#name), { force: true });
  }
}

export class SandboxDisks {
  readonly dataDir: string;
  /** Bytes each sandbox may write. */
  readonly bytes: number;
  /** Why sandboxes' disks are not bounded here, if they are not. */
  #unavailable: string | undefined;
  readonly #mkfs: string | undefined;
  #probed: Promise<string | undefined> | undefined;
  /** The disks mounted by this runtime, each held to a limit the host can keep. */
  readonly promises: DiskPromises;

  /** `options.promisedBytes`: PROMISED_BYTES but where a test scales the host down. */
  constructor(dataDir: string, bytes: number, options: { promisedBytes?: number } = {}) {
    this.dataDir = dataDir;
    this.bytes = bytes;
    const dirs = [...(process.env.PATH ?? "").split(":").filter(Boolean), ...SYSTEM_DIRS];
    this.promises = new DiskPromises(dataDir, options.promisedBytes ?? PROMISED_BYTES, ROOT_RESERVE_BYTES, findExecutable("fstrim", dirs));
    this.#mkfs = findExecutable("mkfs.ext4", dirs);
    this.#unavailable =
      process.getuid?.() !== 0
        ? "the runtime is not root, and only root mounts a disk"
        : this.#mkfs === undefined
          ? "mkfs.ext4 is missing (apt-get install e2fsprogs)"
          : !existsSync("/dev/loop-control")
            ? "this kernel has no loop devices"
            : undefined;
  }

  /** Why each sandbox's disk is not bounded (then sandboxes write on the data folder's own disk), or undefined. */
  get unavailable(): string | undefined {
    return this.#unavailable;
  }

  imagePath(name: string): string {
    return join(this.dataDir, DISKS_DIR, `${name}.img`);
  }

  /** Whether sandbox `name` has a disk already (what it wrote lives there). */
  has(name: string): boolean {
    return existsSync(this.imagePath(name));
  }

  /** Removes sandbox `name`'s disk and all it holds (an ephemeral workspace starts empty). Its container has exited. */
  discard(name: string, dir: string): void {
    if (isMountPoint(dir)) unmount(dir);
    this.promises.recount(this.imagePath(name));
    rmSync(this.imagePath(name), { force: true });
  }

  /**
   * Mounts sandbox `name`'s disk at `dir` (made first if it has none), or returns undefined where
   * disks cannot be had: then the sandbox writes on the data folder's disk, as it did before. A
   * workspace kept in `dir` from before its sandbox had a disk is copied onto the new disk; one
   * larger than the disk stays where it is, unbounded, and the runtime says so. Where the host cannot
   * promise the disk its room, INSUFFICIENT_STORAGE (a disk made for it is removed again).
   */
  async open(dir: string, name: string): Promise<SandboxDisk | undefined> {
    if (await this.probe()) return undefined;
    const image = this.imagePath(name);
    if (isMountPoint(dir)) {
      // Left mounted by a runtime that crashed: held to a limit again, whatever the host has now.
      await this.promises.admit(new DiskAllowance(image, dir), 0, true);
      return new SandboxDisk(this, dir, name);
    }
    const made = !existsSync(image);
    const legacy = hasWorkspace(dir);
    if (legacy && !made) {
      // Written while its disk could not be mounted (a runtime not root, meanwhile): newer than the disk, kept.
      console.warn(`runtime: sandbox ${name} keeps the workspace it wrote without its disk, unbounded (its disk is ${image})`);
      return undefined;
    }
    try {
      if (made) await this.#make(image, this.bytes + ROOT_RESERVE_BYTES);
      if (!legacy) {
        clearFolder(dir);
        await this.#mountHeld(image, dir, 0);
        return new SandboxDisk(this, dir, name);
      }
      const staging = join(this.dataDir, DISKS_DIR, `.staging-${randomUUID()}`);
      mkdirSync(staging, { mode: 0o700 });
      try {
        // Its limit lets the copy in at once: the watch raises it only as fast as it looks.
        await this.#mountHeld(image, staging, await diskUsage(join(dir, "workspace")));
      } catch (error) {
        rmdirSync(staging);
        throw error;
      }
      try {
        await run("cp", ["-a", join(dir, "workspace"), staging], "copy the workspace onto its disk");
      } catch (error) {
        unmount(staging);
        this.promises.recount(image);
        rmdirSync(staging);
        rmSync(image, { force: true });
        console.warn(`runtime: sandbox ${name} keeps its workspace on the data folder's disk, unbounded: it does not fit on a disk of ${this.bytes} bytes (${(error as Error).message})`);
        return undefined;
      }
      const disk = new SandboxDisk(this, staging, name);
      await disk.adopt(dir, name);
      return disk;
    } catch (error) {
      if (!isMountPoint(dir)) {
        this.promises.recount(image);
        if (made) rmSync(image, { force: true });
      }
      throw error;
    }
  }

  /** Mounts `image` at `dir` held to its first limit (`extra` more room at once), or not at all where the host cannot promise it. */
  async #mountHeld(image: string, dir: string, extra: number): Promise<void> {
    await this.#mount(image, dir);
    try {
      await this.promises.admit(new DiskAllowance(image, dir), extra);
    } catch (error) {
      unmount(dir);
      throw error;
    }
  }

  /**
   * Unmounts every disk a runtime that crashed left mounted in the data folder, and removes the warm
   * containers' disks (nobody's): called before the runtime starts anything.
   */
  reapLeftovers(): void {
    const prefix = `${this.dataDir}/`;
    for (const point of mountPoints().filter((path) => path.startsWith(prefix)).reverse()) unmount(point);
    const folder = join(this.dataDir, DISKS_DIR);
    for (const name of existsSync(folder) ? readdirSync(folder) : []) {
      if (name.startsWith(".")) rmSync(join(folder, name), { recursive: true, force: true });
    }
  }

  /** A sparse image with an empty ext4, root's alone. A full host disk is INSUFFICIENT_STORAGE. */
  async #make(image: string, size: number): Promise<void> {
    mkdirSync(dirname(image), { recursive: true, mode: 0o700 });
    writeFileSync(image, "", { mode: 0o600 });
    const reservePercent = ((ROOT_RESERVE_BYTES / size) * 100).toFixed(3);
    // Inode tables and the journal are left to be written as used: a sparse image stays small.
    truncateSync(image, size);
    try {
      await run(this.#mkfs!, ["-q", "-F", "-m", reservePercent, "-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard", image], "make a sandbox's disk");
    } catch (error) {
      rmSync(image, { force: true });
      const why = (error as Error).message;
      if (/No space left|ENOSPC|quota/i.test(why)) throw new ServiceError("INSUFFICIENT_STORAGE", `no room on the host's disk for a sandbox's disk: ${why}`);
      throw error;
    }
    chmodSync(image, 0o600);
  }

  /** Mounts `image` at `dir`, a folder root's alone. */
  async #mount(image: string, dir: string): Promise<void> {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    await run("mount", ["-o", MOUNT_OPTIONS, image, dir], `mount a sandbox's disk at ${dir}`);
    chmodSync(dir, 0o700);
  }

  /**
   * Mounts a small disk and unmounts it: whether this machine can (a root without CAP_SYS_ADMIN, in a
   * container, cannot). Where it cannot, sandboxes write on the data folder's disk from now on.
   */
  probe(): Promise<string | undefined> {
    this.#probed ??= this.#probe();
    return this.#probed;
  }

  async #probe(): Promise<string | undefined> {
    if (this.#unavailable) return this.#unavailable;
    const name = `.probe-${randomUUID()}`;
    const dir = join(this.dataDir, DISKS_DIR, name);
    const image = this.imagePath(name);
    try {
      await this.#make(image, 2 * ROOT_RESERVE_BYTES);
      await this.#mount(image, dir);
      unmount(dir);
    } catch (error) {
      // A full host disk says nothing of whether disks can be had: the next start asks again (and is 507 meanwhile).
      if (error instanceof ServiceError) {
        this.#probed = undefined;
        return undefined;
      }
      this.#unavailable = `a disk cannot be mounted here (${(error as Error).message.split("\n")[0]})`;
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(image, { force: true });
    }
    return this.#unavailable;
  }
}

const execFileAsync = promisify(execFile);

/** Bytes the files under `dir` take on their disk. */
async function diskUsage(dir: string): Promise<number> {
  const { stdout } = await execFileAsync("du", ["-s", "-k", dir], { encoding: "utf8" });
  return Number(stdout.split("\t")[0]) * 1024;
}

/** Runs a program to its end; its error says what it printed. */
async function run(file: string, args: string[], what: string): Promise<void> {
  try {
    await execFileAsync(file, args, { encoding: "utf8" });
  } catch (error) {
    const printed = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`could not ${what}: ${printed || (error as Error).message}`);
  }
}

/** Detaches at once; the file system goes when nothing holds it any more (a container's last process). */
function unmount(dir: string): void {
  spawnSync("umount", ["--lazy", dir], { stdio: "ignore" });
}

/** Mount points of this mount namespace, as /proc/self/mountinfo lists them (octal escapes undone). */
function mountPoints(): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => unescapeMountPath(line.split(" ")[4]!));
}

export function isMountPoint(dir: string): boolean {
  return mountPoints().includes(dir);
}

/** A workspace with something in it, from before its sandbox had a disk. */
export function hasWorkspace(dir: string): boolean {
  try {
    return readdirSync(join(dir, "workspace")).length > 0;
  } catch {
    return false;
  }
}

/** Empties a sandbox's folder on the host's disk before a disk is mounted over it (an empty workspace, an old log). */
function clearFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
}
