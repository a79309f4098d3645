/**
 * A sandbox's own certificate authority, for the TLS our proxy terminates: made when the sandbox's
 * network is first set up, its key kept in this process alone (the sandbox gets the certificate, in
 * its trust store). Each name the sandbox connects to gets a leaf certificate, made once and kept.
 *
 * Keys are made by Node (P-256); certificates are signed by Debian's `openssl` (Node has no API that
 * writes X.509). openssl 3 reads keys only from files (Node's child pipes are sockets, which it
 * cannot open), so for each signing the keys are written to a folder only the runtime's user may
 * enter, outside every container's view, and removed as soon as openssl exits. A CA lives two days
 * at most and a sandbox's network is set up anew at every container start, so it never needs renewing.
 */
import { spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isIP } from "node:net";
import { createSecureContext, type SecureContext } from "node:tls";

const VALID_DAYS = 2;
/** Names kept per sandbox: a sandbox reaching more hosts makes certificates anew for the oldest. */
const MAX_LEAVES = 1024;

export interface Certificates {
  /** The authority's certificate (PEM): what the sandbox trusts. */
  readonly caPem: string;
  contextFor(name: string): Promise<SecureContext>;
}

export async function makeCertificates(openssl: string, label: string): Promise<Certificates> {
  const caKey = newKey();
  const caPem = await runOpenssl(
    openssl,
    ["req", "-x509", "-new", "-key", "{0}", "-subj", `/O=edge-sandbox/CN=${label.replace(/[^\w.-]/g, "_")} egress CA`, "-days", String(VALID_DAYS),
      "-addext", "basicConstraints=critical,CA:TRUE,pathlen:0", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
    [caKey],
  );
  const leafKey = newKey();
  const leaves = new Map<string, Promise<SecureContext>>();
  return {
    caPem,
    contextFor(name: string): Promise<SecureContext> {
      let context = leaves.get(name);
      if (!context) {
        context = leafContext(openssl, name, leafKey, caPem, caKey);
        leaves.set(name, context);
        context.catch(() => leaves.delete(name));
        if (leaves.size > MAX_LEAVES) leaves.delete(leaves.keys().next().value!);
      }
      return context;
    },
  };
}

async function leafContext(openssl: string, name: string, key: string, caPem: string, caKey: string): Promise<SecureContext> {
  if (!isIP(name) && !/^[a-z0-9_.-]{1,253}$/i.test(name)) throw new Error(`no certificate is made for the name ${JSON.stringify(name)}`);
  const san = isIP(name) ? `IP:${name}` : `DNS:${name}`;
  const cert = await runOpenssl(
    openssl,
    ["req", "-x509", "-new", "-key", "{0}", "-CA", "{1}", "-CAkey", "{2}", "-subj", `/CN=${isIP(name) ? name : name.slice(0, 64)}`, "-days", String(VALID_DAYS),
      "-addext", `subjectAltName=${san}`, "-addext", "extendedKeyUsage=serverAuth", "-addext", "basicConstraints=critical,CA:FALSE"],
    [key, caPem, caKey],
  );
  return createSecureContext({ key, cert: `${cert}${caPem}` });
}

function newKey(): string {
  return generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
}

/** Runs openssl with `inputs` in files named where `{i}` stands in its arguments; its standard output is the answer. */
function runOpenssl(openssl: string, args: string[], inputs: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-egress-"));
  const files = inputs.map((input, index) => {
    const file = join(dir, String(index));
    writeFileSync(file, input, { mode: 0o600 });
    return file;
  });
  const argv = args.map((arg) => arg.replace(/^\{(\d)\}$/, (_match, index: string) => files[Number(index)]!));
  return new Promise<string>((resolve, reject) => {
    const child = spawn(openssl, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout!.on("data", (chunk: Buffer) => (out += chunk));
    child.stderr!.on("data", (chunk: Buffer) => (err += chunk));
    child.once("error", (error) => reject(new Error(`openssl failed to start (${error.message})`)));
    child.once("close", (code) => (code === 0 && out.includes("BEGIN CERTIFICATE") ? resolve(out) : reject(new Error(`openssl: ${err.trim().split("\n")[0] ?? `exit ${code}`}`))));
  }).finally(() => rmSync(dir, { recursive: true, force: true }));
}
