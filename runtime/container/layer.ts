/**
 * A container's writable layer: the folders a program in the image may write besides /workspace
 * (the root directory itself, /tmp, /var, /root, /home, /opt, /srv, /mnt, /run, /usr/local), and
 * the files of /etc that say who the machine is (hostname, hosts, DNS). It is made anew at every
 * start, as a container's own disk is; only the workspace outlives a container.
 */
import { chmodSync, lchownSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { HostUser } from "./host-users.ts";
import { NAMESPACE_ADDRESSES } from "../egress/namespace-addresses.ts";

/** The system's trust bundle, under /etc (Debian's path: what OpenSSL, curl and git read by default). */
export const TRUST_BUNDLE = "ssl/certs/ca-certificates.crt";

export const CONTAINER_HOSTNAME = "sandbox";

/**
 * Folder in the layer the container sees as `/`: what a program writes at the top level (`/data`,
 * `/test-file.txt`) lands there, on the layer's disk, beside the mount points bwrap makes in it.
 */
export const LAYER_ROOT = { name: "root-dir", mode: 0o755 } as const;

/** Folder in the layer → where the container sees it, and its mode. */
export const LAYER_DIRS = [
  { name: "tmp", path: "/tmp", mode: 0o1777 },
  { name: "var", path: "/var", mode: 0o755 },
  { name: "root", path: "/root", mode: 0o700 },
  { name: "home", path: "/home", mode: 0o755 },
  { name: "opt", path: "/opt", mode: 0o755 },
  { name: "srv", path: "/srv", mode: 0o755 },
  { name: "mnt", path: "/mnt", mode: 0o755 },
  { name: "run", path: "/run", mode: 0o755 },
  { name: "usr-local", path: "/usr/local", mode: 0o755 },
] as const;

/** Made inside those, as the image has them. */
const SUBDIRS: readonly [string, number][] = [
  ["var/tmp", 0o1777],
  ["var/log", 0o755],
  ["var/cache", 0o755],
  ["var/lib", 0o755],
  ["var/spool", 0o755],
  ["usr-local/bin", 0o755],
  ["usr-local/sbin", 0o755],
  ["usr-local/lib", 0o755],
  ["usr-local/share", 0o755],
  ["usr-local/include", 0o755],
  ["usr-local/src", 0o755],
];

/**
 * Files laid over /etc (the image's own would say another machine's name and DNS), and the system's
 * trust bundle, which gains the sandbox's egress authority when its network is set up.
 */
export const ETC_FILES = ["hostname", "hosts", "resolv.conf", TRUST_BUNDLE] as const;

/** Makes `layer` anew, owned by `user` (or the runtime's own user), and returns it. */
export function freshLayer(layer: string, user: HostUser | undefined, systemRoot = "/"): string {
  rmSync(layer, { recursive: true, force: true });
  mkdirSync(layer, { mode: 0o755 });
  makeDir(join(layer, LAYER_ROOT.name), LAYER_ROOT.mode);
  for (const { name, mode } of LAYER_DIRS) makeDir(join(layer, name), mode);
  for (const [name, mode] of SUBDIRS) makeDir(join(layer, name), mode);
  // Mount points for what the runtime binds over the layer (the Node of the image).
  writeFileSync(join(layer, "usr-local/bin/node"), "");
  const etc = join(layer, "etc");
  makeDir(etc, 0o755);
  writeFileSync(join(etc, "hostname"), `${CONTAINER_HOSTNAME}\n`);
  writeFileSync(join(etc, "hosts"), `127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t${CONTAINER_HOSTNAME}\n`);
  // Where a container with network asks for names: the egress resolver (without network, nothing answers).
  writeFileSync(join(etc, "resolv.conf"), `nameserver ${NAMESPACE_ADDRESSES.resolver}\n`);
  makeDir(join(etc, "ssl/certs"), 0o755);
  writeFileSync(join(etc, TRUST_BUNDLE), systemTrustBundle(systemRoot));
  if (user) ownAll(layer, user);
  return layer;
}

/** The system root's own bundle ("" where it has none). */
export function systemTrustBundle(systemRoot: string): string {
  try {
    return readFileSync(join(systemRoot, "etc", TRUST_BUNDLE), "utf8");
  } catch {
    return "";
  }
}

/** The layer's bundle: the system's, then the sandbox's egress authority (written in place: the container binds this very file). */
export function trustEgressAuthority(layer: string, systemRoot: string, caPem: string): string {
  const path = join(layer, "etc", TRUST_BUNDLE);
  const system = systemTrustBundle(systemRoot);
  writeFileSync(path, `${system}${system.endsWith("\n") || system === "" ? "" : "\n"}${caPem}`);
  return `/etc/${TRUST_BUNDLE}`;
}

function makeDir(path: string, mode: number): void {
  mkdirSync(path, { recursive: true });
  chmodSync(path, mode); // the umask would take the sticky and group/other bits off
}

/** The layer was just made by the runtime: nothing in it is a sandbox's yet, so a plain walk is safe. */
function ownAll(dir: string, user: HostUser): void {
  lchownSync(dir, user.uid, user.gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) ownAll(path, user);
    else lchownSync(path, user.uid, user.gid);
  }
}
