/**
 * On Cloudflare, a container whose outbound HTTPS the platform intercepts (to judge it by the
 * sandbox's network policy) sees certificates signed by Cloudflare's containers CA, which the
 * platform puts in the container at a known path. Commands must trust it beside the system's
 * authorities: the server writes both into one bundle and points commands at it, as the local
 * runtime does for its own proxy's authority. Where that file is absent (anywhere but Cloudflare),
 * nothing is written.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where the platform puts its CA. */
export const PLATFORM_CA_FILE = "/etc/cloudflare/certs/cloudflare-containers-ca.crt";
/** Debian's bundle of the system's authorities (the image is Debian's). */
export const SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/** The bundle's path, or undefined when there is no platform CA to add. */
export function platformTrustBundle(platformCa = PLATFORM_CA_FILE, systemBundle = SYSTEM_CA_BUNDLE, dir = tmpdir()): string | undefined {
  if (!existsSync(platformCa)) return undefined;
  const system = existsSync(systemBundle) ? readFileSync(systemBundle, "utf8") : "";
  const bundle = join(dir, "sandbox-ca-bundle.crt");
  // Read-only once written: a server started again in the same container writes it anew.
  rmSync(bundle, { force: true });
  writeFileSync(bundle, `${system.trimEnd()}\n${readFileSync(platformCa, "utf8").trim()}\n`, { mode: 0o444 });
  return bundle;
}
