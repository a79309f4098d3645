/**
 * Which repository URLs a clone accepts, and the directory name a repository clones into by default.
 *
 * Accepted: `https://` and `http://` (hosted repositories), `ssh://` and the scp-like `user@host:path`
 * (with the sandbox's own keys), and `file://` (a repository already inside the sandbox). Refused:
 * everything else, notably git's `<helper>::<address>` syntax (`ext::sh -c …` runs a command) and
 * `git://` (unauthenticated, unencrypted). Text git could read as an option (`--upload-pack=…`, a
 * host starting with `-`) is refused too, although the clone also passes the URL after `--`.
 * The same list goes to git as GIT_ALLOW_PROTOCOL, so redirects and submodules keep to it.
 */
import { ServiceError } from "../../server-kit/service-error.ts";

/** Transports git may use, in GIT_ALLOW_PROTOCOL's words. */
export const ALLOWED_GIT_PROTOCOLS = ["https", "http", "ssh", "file"] as const;

const URL_SCHEMES = new Set(["https:", "http:", "ssh:", "file:"]);
/** `user@host:path`, git's scp-like syntax for ssh (no `//` after the colon, which would be a URL). */
const SCP_LIKE = /^[A-Za-z0-9._~+-]+@([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(?!\/\/)\S+$/;
const FORBIDDEN_CHARS = /[\s\x00-\x1f\x7f]/;

function refuse(repoUrl: string, why: string): never {
  throw new ServiceError("INVALID_GIT_URL", `${why}: ${JSON.stringify(repoUrl)}`, { repoUrl, allowed: [...ALLOWED_GIT_PROTOCOLS, "user@host:path"] });
}

/** Throws INVALID_GIT_URL unless the URL is one a clone accepts. */
export function checkRepoUrl(repoUrl: string): void {
  if (repoUrl.startsWith("-")) refuse(repoUrl, "a repository URL cannot start with '-'");
  if (FORBIDDEN_CHARS.test(repoUrl)) refuse(repoUrl, "a repository URL cannot contain whitespace or control characters");
  if (SCP_LIKE.test(repoUrl)) {
    const host = repoUrl.slice(repoUrl.indexOf("@") + 1);
    if (host.startsWith("-")) refuse(repoUrl, "a repository host cannot start with '-'");
    return;
  }
  let url: URL;
  try {
    url = new URL(repoUrl);
  } catch {
    refuse(repoUrl, "not a repository URL (use https://, http://, ssh://, user@host:path or file://)");
  }
  if (!URL_SCHEMES.has(url.protocol)) refuse(repoUrl, `the ${url.protocol.slice(0, -1)} scheme is not allowed (use https, http, ssh or file)`);
  if (url.protocol === "file:") {
    if (url.hostname !== "" || url.pathname === "/") refuse(repoUrl, "a file URL names a repository by its absolute path (file:///path/to/repo)");
    return;
  }
  if (url.hostname === "") refuse(repoUrl, "the repository URL has no host");
  if (url.hostname.startsWith("-") || decodeURIComponent(url.username).startsWith("-")) refuse(repoUrl, "a repository host or user cannot start with '-'");
}

/** The last path component without `.git`: `https://host/team/app.git` → `app`. */
export function repoNameOf(repoUrl: string): string {
  const path = repoUrl.replace(/[?#].*$/, "").replace(/\/+$/, "");
  const last = path.split(/[/:]/).pop() ?? "";
  const name = decodeURIComponentSafe(last).replace(/\.git$/, "");
  return name === "" || name === "." || name === ".." || name.includes("/") ? "repository" : name;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
