/**
 * The operating system packages this project needs, declared once: the Debian package, how to tell
 * it is installed, and which of `npm start`, `npm test`, `npm run test:image` and `npm run bench` need it. The checker
 * (ensure.ts) derives everything from this list: what to probe, what to install, what to tell a user.
 */

import { wireMyhostname } from "./nsswitch.ts";

/** What needs a package: `npm start`, `npm test`, `npm run test:image`, or `npm run bench` (beyond what the tests need). */
export type Need = "start" | "test" | "image" | "bench";

/**
 * How to tell a package is installed: every command is on PATH, the system Python imports a module,
 * or the system's resolver (getaddrinfo, as every client asks it) gives a name loopback addresses.
 */
export type Probe = { commands: readonly string[] } | { pythonImport: string } | { resolvesToLoopback: string };

export interface OsPackage {
  /** The Debian package (what apt-get installs). */
  name: string;
  probe: Probe;
  needs: readonly Need[];
  /** What it is for, in a few words (said when it is missing). */
  why: string;
  /** What makes it take effect, as root, where installing it did not (a module the system must be told to use). */
  settle?: () => void;
}

/** The system Python, where Debian's Python libraries live (the code interpreter's default). */
export const SYSTEM_PYTHON = "/usr/bin/python3";

export const OS_PACKAGES: readonly OsPackage[] = [
  { name: "bubblewrap", probe: { commands: ["bwrap"] }, needs: ["start", "test", "image"], why: "sandbox isolation, and running the built image" },
  { name: "slirp4netns", probe: { commands: ["slirp4netns"] }, needs: ["start", "test"], why: "the network of commands the container server confines itself (SANDBOX_ISOLATION of a server)" },
  { name: "util-linux", probe: { commands: ["unshare", "nsenter", "setpriv", "flock"] }, needs: ["start", "test"], why: "unshare, nsenter and setpriv for sandbox networks, flock for the host uids a runtime leases" },
  // chattr stands for the package: mkfs.ext4 is in /usr/sbin, off an ordinary user's PATH (only a root runtime makes disks).
  { name: "e2fsprogs", probe: { commands: ["chattr"] }, needs: ["start", "test"], why: "mkfs.ext4 for each sandbox's disk of its own (SANDBOX_DISK_MAX)" },
  { name: "mount", probe: { commands: ["mount", "umount"] }, needs: ["start", "test"], why: "mounting each sandbox's disk of its own" },
  { name: "perl-base", probe: { commands: ["perl"] }, needs: ["start", "test"], why: "the egress proxy's transparent listener (IP_TRANSPARENT, which Node cannot set)" },
  { name: "nftables", probe: { commands: ["nft"] }, needs: ["start", "test"], why: "a sandbox network's only way out: its egress proxy" },
  { name: "iproute2", probe: { commands: ["ip"] }, needs: ["start", "test"], why: "the address and route of a sandbox network" },
  { name: "valgrind", probe: { commands: ["valgrind"] }, needs: ["bench"], why: "counting the instructions the container server runs until it listens (callgrind), a figure a busy machine does not blur" },
  { name: "openssl", probe: { commands: ["openssl"] }, needs: ["test"], why: "the test servers' certificates of the egress tests and benchmark" },
  { name: "procps", probe: { commands: ["ps", "top"] }, needs: ["start", "test"], why: "ps for the runtime, top in terminals" },
  { name: "git", probe: { commands: ["git"] }, needs: ["start", "test"], why: "git checkout in sandboxes" },
  {
    name: "libnss-myhostname",
    probe: { resolvesToLoopback: "preview-check.localhost" },
    needs: ["start", "test"],
    why: "preview URLs (<port>-<id>.localhost) that every client opens: Node's fetch, Python, anything asking getaddrinfo",
    settle: () => wireMyhostname(),
  },
  { name: "curl", probe: { commands: ["curl"] }, needs: ["start", "test"], why: "commands expect it, as in the image" },
  { name: "vim", probe: { commands: ["vim"] }, needs: ["test"], why: "the terminal test" },
  { name: "python3-numpy", probe: { pythonImport: "numpy" }, needs: ["test"], why: "the code interpreter's Python tests" },
  { name: "python3-pandas", probe: { pythonImport: "pandas" }, needs: ["test"], why: "the code interpreter's Python tests" },
  { name: "python3-matplotlib", probe: { pythonImport: "matplotlib" }, needs: ["test"], why: "the code interpreter's chart tests" },
  { name: "python3-ipython", probe: { pythonImport: "IPython" }, needs: ["test"], why: "the code interpreter's !commands, magics and IPython.display" },
  { name: "python3-pil", probe: { pythonImport: "PIL" }, needs: ["test"], why: "the code interpreter's image results" },
  { name: "python3-httpx", probe: { pythonImport: "httpx" }, needs: ["test"], why: "the Python client (clients/python) and its tests" },
  { name: "python3-pytest", probe: { pythonImport: "pytest" }, needs: ["test"], why: "the Python client's tests" },
  { name: "chromium", probe: { commands: ["chromium"] }, needs: ["test"], why: "the web console's browser test" },
  { name: "buildah", probe: { commands: ["buildah"] }, needs: ["image"], why: "building the image" },
  { name: "mmdebstrap", probe: { commands: ["mmdebstrap"] }, needs: ["image"], why: "the image's Debian base" },
];

/** The packages any of `needs` needs, in declaration order. */
export function packagesFor(needs: readonly Need[], packages: readonly OsPackage[] = OS_PACKAGES): OsPackage[] {
  return packages.filter((pkg) => pkg.needs.some((need) => needs.includes(need)));
}
