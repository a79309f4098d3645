/**
 * A sandbox's egress authority (runtime/egress/certificates.ts) signs in this process and writes
 * nothing: it is made here in a Node whose permission model refuses every file write and every
 * child process, so a key put in a file (or handed to openssl) would fail it. The certificates it
 * issues are read back by Node, checked by openssl as a server's chain for their name, and used
 * for a real TLS handshake; a sandbox's programs trusting them is egress.test.ts's part.
 */
import { describe, expect, it } from "vitest";
import { execFileSync, spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CERTIFICATES = fileURLToPath(new URL("../../runtime/egress/certificates.ts", import.meta.url));

/**
 * Makes an authority and serves TLS with its leaves for each name given, then prints the authority
 * and the leaf each handshake was given (its chain checked against the authority here, its name
 * by the test); first it shows that writing a file is refused here.
 */
const SIGNER = `
const { writeFileSync } = require("node:fs");
const tls = require("node:tls");
let refused = "";
try { writeFileSync(require("node:os").tmpdir() + "/egress-signer-probe", "x"); } catch (error) { refused = error.code; }
(async () => {
  const { makeCertificates } = await import(process.env.CERTIFICATES);
  const certificates = await makeCertificates("test-sandbox");
  const leaves = {};
  for (const name of process.argv.slice(1)) {
    const context = await certificates.contextFor(name);
    // Served as the proxy serves it: TLS on an accepted socket, with the name's context.
    const server = require("node:net").createServer((socket) => new tls.TLSSocket(socket, { isServer: true, secureContext: context }).end("hello"));
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    leaves[name] = await new Promise((resolve, reject) => {
      const client = tls.connect({ port: server.address().port, host: "127.0.0.1", ca: certificates.caPem, ...(require("node:net").isIP(name) ? {} : { servername: name }), checkServerIdentity: () => undefined }, () => {
        resolve(client.getPeerX509Certificate().toString());
        client.end();
      });
      client.on("error", reject);
    });
    server.close();
  }
  console.log(JSON.stringify({ refused, ca: certificates.caPem, leaves }));
})().catch((error) => { console.error(error.stack); process.exit(1); });
`;

function sign(names: string[]): { refused: string; ca: string; leaves: Record<string, string> } {
  const result = spawnSync(process.execPath, ["--permission", "--allow-fs-read=*", "-e", SIGNER, "--", ...names], { env: { ...process.env, CERTIFICATES }, encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { refused: string; ca: string; leaves: Record<string, string> };
}

describe("a sandbox's egress authority", () => {
  it("signs in memory: made and used where no file may be written and no program started", () => {
    const { refused, ca, leaves } = sign(["api.test", "203.0.113.7"]);
    // The wall it is made behind holds: a write is refused there.
    expect(refused).toBe("ERR_ACCESS_DENIED");
    expect(ca).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(Object.keys(leaves)).toEqual(["api.test", "203.0.113.7"]);
  });

  it("issues an authority for servers only, and leaves for one name each, signed by it", () => {
    const { ca: caPem, leaves } = sign(["api.test", "203.0.113.7", "2001:db8::7"]);
    const ca = new X509Certificate(caPem);
    expect(ca.ca).toBe(true);
    expect(ca.subject).toBe("O=edge-sandbox\nCN=test-sandbox egress CA");
    expect(ca.verify(ca.publicKey)).toBe(true);
    const named = new X509Certificate(leaves["api.test"]!);
    expect(named.ca).toBe(false);
    expect(named.issuer).toBe(ca.subject);
    expect(named.verify(ca.publicKey)).toBe(true);
    expect(named.checkIssued(ca)).toBe(true);
    expect(named.checkHost("api.test")).toBe("api.test");
    expect(named.checkHost("other.test")).toBeUndefined();
    expect(named.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    expect(new X509Certificate(leaves["203.0.113.7"]!).checkIP("203.0.113.7")).toBe("203.0.113.7");
    expect(new X509Certificate(leaves["2001:db8::7"]!).checkIP("2001:db8::7")).toBe("2001:db8::7");
    const now = Date.now();
    for (const cert of [ca, named]) {
      expect(Date.parse(cert.validFrom)).toBeLessThan(now);
      expect(Date.parse(cert.validTo)).toBeGreaterThan(now + 24 * 3600_000);
      expect(Date.parse(cert.validTo)).toBeLessThanOrEqual(now + 2 * 24 * 3600_000 + 60_000);
    }
  });

  it("passes openssl's own check of a TLS server's chain, for its name only", () => {
    const { ca, leaves } = sign(["api.test"]);
    const dir = mkdtempSync(join(tmpdir(), "egress-chain-"));
    try {
      writeFileSync(join(dir, "ca.pem"), ca);
      writeFileSync(join(dir, "leaf.pem"), leaves["api.test"]!);
      const verify = (name: string) =>
        spawnSync("openssl", ["verify", "-x509_strict", "-purpose", "sslserver", "-verify_hostname", name, "-CAfile", join(dir, "ca.pem"), join(dir, "leaf.pem")], { encoding: "utf8" });
      expect(verify("api.test").stdout).toContain("leaf.pem: OK");
      expect(verify("other.test").status).not.toBe(0);
      // The authority cannot issue further authorities (path length 0), and is itself no server.
      expect(execFileSync("openssl", ["x509", "-noout", "-text", "-in", join(dir, "ca.pem")], { encoding: "utf8" })).toMatch(/CA:TRUE, pathlen:0[\s\S]*Certificate Sign, CRL Sign/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses to certify a name no TLS client could ask for", () => {
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", `const { makeCertificates } = await import(${JSON.stringify(CERTIFICATES)}); const c = await makeCertificates("x"); await c.contextFor("bad name\\r\\nx").then(() => console.log("made"), (e) => console.log(e.message));`], { encoding: "utf8" });
    expect(result.stdout.trim()).toBe('no certificate is made for the name "bad name\\r\\nx"');
  });
});
