/**
 * The trust bundle a container server writes on Cloudflare: the system's authorities and the
 * platform's CA in one file, and none where the platform's CA is absent.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { platformTrustBundle } from "../../container/boot/platform-trust.ts";

const dir = mkdtempSync(join(tmpdir(), "platform-trust-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("platform trust bundle", () => {
  it("holds the system's authorities and the platform's CA, read-only", () => {
    const system = join(dir, "system.crt");
    const platform = join(dir, "platform.crt");
    writeFileSync(system, "-----BEGIN CERTIFICATE-----\nSYSTEM\n-----END CERTIFICATE-----\n");
    writeFileSync(platform, "-----BEGIN CERTIFICATE-----\nPLATFORM\n-----END CERTIFICATE-----\n");
    const out = mkdtempSync(join(dir, "out-"));
    const bundle = platformTrustBundle(platform, system, out)!;
    expect(readFileSync(bundle, "utf8")).toBe(
      "-----BEGIN CERTIFICATE-----\nSYSTEM\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nPLATFORM\n-----END CERTIFICATE-----\n",
    );
    expect(statSync(bundle).mode & 0o777).toBe(0o444);
    // Written again (a server started anew in the same container), it is the same.
    expect(platformTrustBundle(platform, system, out)).toBe(bundle);
  });

  it("is not made where there is no platform CA", () => {
    expect(platformTrustBundle(join(dir, "absent.crt"), join(dir, "system.crt"), dir)).toBeUndefined();
  });
});
