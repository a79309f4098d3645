/**
 * What every container of one runtime shares, found once: bubblewrap and the egress tools as this
 * machine has them, the host users lent to containers, the operator's allowed host paths (their real paths),
 * the root file system containers run on, and the disks sandboxes write on.
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { findExecutable } from "../../server-kit/executables.ts";
import { DEFAULT_UID_BASE, HostUsers } from "./host-users.ts";
import { detectLimits, type LimitsMechanism } from "./cgroups.ts";
import { seccompUnsupported } from "./seccomp.ts";
import { SandboxDisks } from "./disk.ts";
import { DEFAULT_SANDBOX_LIMITS, fitFileTable, hostFileTable, type SandboxLimits } from "./limits.ts";
import type { ContainerSettings } from "./sandbox-container.ts";
import { EgressRegistry, type EgressTools } from "../egress/registry.ts";
import type { TestHostMap } from "../egress/test-hosts.ts";

export interface ContainerSettingsInput {
  dataDir: string;
  bwrapPath?: string | undefined;
  allowedPaths?: readonly string[];
  rootfs?: string;
  /** First host uid lent to containers when the runtime runs as root (SANDBOX_UID_BASE). */
  uidBase?: number;
  /** Whether a root runtime lends each container a user of its own (default: yes, when root). */
  switchUsers?: boolean;
  /** What each sandbox may take (SANDBOX_PIDS_MAX, …); default DEFAULT_SANDBOX_LIMITS. */
  limits?: SandboxLimits;
  /** Stage the server's files even where the checkout is reachable, or elsewhere (server-files.ts). */
  stageServer?: { force?: boolean; stageRoot?: string };
  /** The test name map of the egress proxy (tests only: egress/test-hosts.ts). */
  egressTestHosts?: TestHostMap;
}

const SYSTEM_DIRS = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

export function containerSettings(input: ContainerSettingsInput): ContainerSettings {
  const support = detectIsolation(input.bwrapPath ? { bwrapPath: input.bwrapPath } : {});
  // A container runs under its seccomp filter or not at all.
  const unfiltered = seccompUnsupported();
  const dirs = [...(process.env.PATH ?? "").split(":").filter(Boolean), ...SYSTEM_DIRS];
  const limits = fitFileTable(input.limits ?? DEFAULT_SANDBOX_LIMITS, hostFileTable());
  return {
    users: new HostUsers(input.uidBase ?? DEFAULT_UID_BASE, input.switchUsers ?? process.getuid?.() === 0),
    bwrap: support.bwrap.path ?? input.bwrapPath ?? "bwrap",
    ...(support.bwrap.available ? (unfiltered ? { unavailable: unfiltered } : {}) : { unavailable: support.bwrap.reason ?? "bwrap cannot run here" }),
    slirp4netns: findExecutable("slirp4netns", dirs),
    egress: new EgressRegistry(egressTools(dirs), input.egressTestHosts),
    ...(input.rootfs ? { rootfs: realOrSelf(resolve(input.rootfs)) } : {}),
    allowedPaths: (input.allowedPaths ?? []).map(realOrSelf),
    dataDir: realOrSelf(input.dataDir),
    limits,
    disks: new SandboxDisks(realOrSelf(input.dataDir), limits.diskBytes),
    ...(input.stageServer ? { stageServer: input.stageServer } : {}),
    mechanism: lazyMechanism(),
  };
}

/** What the egress setup needs: nsenter, setpriv, nft, ip and perl to make the namespace's way out. */
function egressTools(dirs: string[]): EgressTools | { missing: string } {
  const found = Object.fromEntries(["nsenter", "setpriv", "nft", "ip", "perl"].map((name) => [name, findExecutable(name, dirs)]));
  const missing = Object.entries(found).filter(([, path]) => path === undefined).map(([name]) => name);
  if (missing.length > 0) return { missing: `a sandbox with network needs ${missing.join(", ")}: apt-get install util-linux nftables iproute2 perl-base` };
  return { nsenter: found.nsenter!, setpriv: found.setpriv!, nft: found.nft!, perl: found.perl!, node: process.execPath };
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Found (and the runtime's parent groups made) when the first container needs them, once. */
function lazyMechanism(): () => LimitsMechanism {
  let found: LimitsMechanism | undefined;
  return () => (found ??= detectLimits(`edge-sandbox-${process.pid}`));
}
