/**
 * The system's resolver told to ask nss-myhostname, which answers every `*.localhost` name with
 * loopback: Debian's package puts `myhostname` after `files` on the `hosts:` line when it is
 * installed, but not when the package was there before, or the line was written by hand since. This
 * does the same, once, and leaves a line that names it as it is.
 */
import { readFileSync, writeFileSync } from "node:fs";

export const NSSWITCH_CONF = "/etc/nsswitch.conf";

/** `conf` with `myhostname` right after `files` (and its action, if any) on the hosts line; unchanged when it is there. */
export function withMyhostname(conf: string): string {
  const lines = conf.split("\n");
  const index = lines.findIndex((line) => /^hosts:/.test(line));
  if (index < 0) return `${conf.replace(/\n?$/, "\n")}hosts:          files myhostname dns\n`;
  const line = lines[index]!;
  const [sources = "", comment] = splitComment(line.slice("hosts:".length));
  if (/(^|\s)myhostname(\s|$)/.test(sources)) return conf;
  const afterFiles = /(^|\s)(files(\s+\[[^\]]*\])?)(?=\s|$)/;
  const placed = afterFiles.test(sources) ? sources.replace(afterFiles, "$1$2 myhostname") : ` myhostname${sources}`;
  lines[index] = `hosts:${placed}${comment === undefined ? "" : `#${comment}`}`;
  return lines.join("\n");
}

/** Has the system's resolver ask nss-myhostname (root only; a file that needs no change is not written). */
export function wireMyhostname(path = NSSWITCH_CONF): void {
  let conf: string;
  try {
    conf = readFileSync(path, "utf8");
  } catch {
    conf = "";
  }
  const wired = withMyhostname(conf);
  if (wired !== conf) writeFileSync(path, wired);
}

function splitComment(text: string): [string, string | undefined] {
  const at = text.indexOf("#");
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}
