/**
 * A sandbox's own certificate authority, for the TLS our proxy terminates: made when the sandbox's
 * network is first set up, its key kept in this process's memory alone (the sandbox gets the
 * certificate, in its trust store). Each name the sandbox connects to gets a leaf certificate, made
 * once and kept.
 *
 * Keys are made by Node (P-256) and certificates written and signed in this process
 * (certificate-der.ts): no key is ever written to a file or handed to another program, and a new
 * name costs a signature, not a process. A CA lives two days at most and a sandbox's network is set
 * up anew at every container start, so it never needs renewing.
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { isIP } from "node:net";
import { createSecureContext, type SecureContext } from "node:tls";
import { certificateDer, nameDer, pem } from "./certificate-der.ts";

const VALID_DAYS = 2;
/** How far back a certificate's validity starts, for a sandbox clock a little behind ours. */
const BACKDATE_MS = 60 * 60 * 1000;
/** Names kept per sandbox: a sandbox reaching more hosts makes certificates anew for the oldest. */
const MAX_LEAVES = 1024;

export interface Certificates {
  /** The authority's certificate (PEM): what the sandbox trusts. */
  readonly caPem: string;
  contextFor(name: string): Promise<SecureContext>;
}

interface Authority {
  name: Buffer;
  keys: { publicKey: KeyObject; privateKey: KeyObject };
  pem: string;
}

export async function makeCertificates(label: string): Promise<Certificates> {
  const keys = newKeys();
  const name = nameDer(`${label.replace(/[^\w.-]/g, "_").slice(0, 40)} egress CA`, "edge-sandbox");
  const authority: Authority = {
    name,
    keys,
    pem: pem(certificateDer({ subject: name, issuer: name, publicKey: keys.publicKey, issuerPublicKey: keys.publicKey, signingKey: keys.privateKey, ...validity(), use: { authority: true } })),
  };
  // One key for every leaf of this authority: its certificates differ by name only.
  const leafKeys = newKeys();
  const leafKeyPem = leafKeys.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const leaves = new Map<string, Promise<SecureContext>>();
  return {
    caPem: authority.pem,
    contextFor(host: string): Promise<SecureContext> {
      let context = leaves.get(host);
      if (!context) {
        context = Promise.resolve().then(() => leafContext(authority, host, leafKeys.publicKey, leafKeyPem));
        leaves.set(host, context);
        context.catch(() => leaves.delete(host));
        if (leaves.size > MAX_LEAVES) leaves.delete(leaves.keys().next().value!);
      }
      return context;
    },
  };
}

function leafContext(authority: Authority, host: string, publicKey: KeyObject, keyPem: string): SecureContext {
  if (!isIP(host) && !/^[a-z0-9_.-]{1,253}$/i.test(host)) throw new Error(`no certificate is made for the name ${JSON.stringify(host)}`);
  const cert = certificateDer({
    subject: nameDer(isIP(host) ? host : host.slice(0, 64)),
    issuer: authority.name,
    publicKey,
    issuerPublicKey: authority.keys.publicKey,
    signingKey: authority.keys.privateKey,
    ...validity(),
    use: { server: host },
  });
  return createSecureContext({ key: keyPem, cert: `${pem(cert)}${authority.pem}` });
}

function newKeys(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync("ec", { namedCurve: "P-256" });
}

function validity(): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  return { notBefore: new Date(now - BACKDATE_MS), notAfter: new Date(now + VALID_DAYS * 24 * 60 * 60 * 1000) };
}
