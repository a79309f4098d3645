/**
 * The X.509 certificates the proxy's authority issues, written as DER in this process and signed
 * with Node's own ECDSA (P-256, SHA-256), so that no key is ever handed to another program or
 * written anywhere. Node reads certificates but cannot write them; the libraries that do bring a
 * dozen packages and a global reflection polyfill for what is here two fixed shapes: an authority
 * (basic constraints CA, path length 0, key usage to sign certificates) and a server certificate
 * for one name or address (CA false, digital signature, server auth, its subject alternative name).
 * Field by field as RFC 5280 4.1 lays them out; the result is read back by Node's X509Certificate
 * in the tests, and trusted by curl, Python, Node and git in a sandbox.
 */
import { createHash, randomBytes, sign, type KeyObject } from "node:crypto";
import { isIP } from "node:net";

export interface CertificateRequest {
  /** The subject's Name, DER (nameDer below). */
  subject: Buffer;
  /** The issuer's Name, DER: the subject's for a self-signed authority. */
  issuer: Buffer;
  publicKey: KeyObject;
  /** The issuer's public key (for its key identifier): the subject's own for a self-signed authority. */
  issuerPublicKey: KeyObject;
  signingKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  /** An authority, or a server certificate for this name or address. */
  use: { authority: true } | { server: string };
}

const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  subjectKeyIdentifier: "2.5.29.14",
  keyUsage: "2.5.29.15",
  subjectAltName: "2.5.29.17",
  basicConstraints: "2.5.29.19",
  authorityKeyIdentifier: "2.5.29.35",
  extKeyUsage: "2.5.29.37",
  serverAuth: "1.3.6.1.5.5.7.3.1",
} as const;

/** The certificate, DER. */
export function certificateDer(request: CertificateRequest): Buffer {
  const algorithm = sequence(oid(OID.ecdsaWithSha256));
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serialNumber()),
    algorithm,
    request.issuer,
    sequence(time(request.notBefore), time(request.notAfter)),
    request.subject,
    request.publicKey.export({ type: "spki", format: "der" }),
    explicit(3, sequence(...extensions(request))),
  );
  const signature = sign("sha256", tbs, { key: request.signingKey, dsaEncoding: "der" });
  return sequence(tbs, algorithm, bitString(signature));
}

/** A Name of an organization (optional) and a common name. */
export function nameDer(commonName: string, organization?: string): Buffer {
  const attribute = (type: string, value: string) => set(sequence(oid(type), tlv(0x0c, Buffer.from(value, "utf8"))));
  return sequence(...(organization === undefined ? [] : [attribute(OID.organization, organization)]), attribute(OID.commonName, commonName));
}

export function pem(der: Buffer): string {
  return `-----BEGIN CERTIFICATE-----\n${der.toString("base64").replace(/.{64}/g, "$&\n").replace(/\n?$/, "\n")}-----END CERTIFICATE-----\n`;
}

function extensions(request: CertificateRequest): Buffer[] {
  const authorityKey = extension(OID.authorityKeyIdentifier, false, sequence(tlv(0x80, keyIdentifier(request.issuerPublicKey))));
  if ("authority" in request.use) {
    return [
      extension(OID.basicConstraints, true, sequence(tlv(0x01, Buffer.from([0xff])), integer(Buffer.from([0])))),
      extension(OID.keyUsage, true, keyUsage(0x06, 1)), // keyCertSign, cRLSign
      extension(OID.subjectKeyIdentifier, false, tlv(0x04, keyIdentifier(request.publicKey))),
      authorityKey,
    ];
  }
  const name = request.use.server;
  const family = isIP(name);
  const altName = family === 0 ? tlv(0x82, Buffer.from(name, "ascii")) : tlv(0x87, addressBytes(name, family));
  return [
    extension(OID.basicConstraints, true, sequence()),
    extension(OID.keyUsage, true, keyUsage(0x80, 7)), // digitalSignature
    extension(OID.extKeyUsage, false, sequence(oid(OID.serverAuth))),
    extension(OID.subjectAltName, false, sequence(altName)),
    authorityKey,
  ];
}

/** 16 random bytes, positive and of full length (RFC 5280 4.1.2.2). */
function serialNumber(): Buffer {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return bytes;
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));
}

/** KeyUsage bits, the first byte of the named bits (RFC 5280 4.2.1.3) and how many of its low bits are unused. */
function keyUsage(bits: number, unused: number): Buffer {
  return tlv(0x03, Buffer.from([unused, bits]));
}

/** The SHA-1 of the public key's bits (RFC 5280 4.2.1.2, method 1). */
function keyIdentifier(key: KeyObject): Buffer {
  const spki = key.export({ type: "spki", format: "der" });
  // The key's BIT STRING is the SubjectPublicKeyInfo's last element: for P-256, its last 65 bytes.
  return createHash("sha1").update(spki.subarray(spki.length - 65)).digest();
}

function addressBytes(address: string, family: number): Buffer {
  if (family === 4) return Buffer.from(address.split(".").map(Number));
  // A trailing dotted quad (::ffff:192.0.2.1) is the last two groups.
  address = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a, b, c, d) => `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`);
  const [head = "", tail = ""] = address.split("::");
  const groups = (text: string) => (text ? text.split(":").map((group) => parseInt(group, 16)) : []);
  const front = groups(head);
  const back = address.includes("::") ? groups(tail) : [];
  const words = [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = Buffer.alloc(16);
  words.forEach((word, index) => bytes.writeUInt16BE(word, index * 2));
  return bytes;
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5), to the second. */
function time(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, "").replace(/\.\d+Z$/, "Z");
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(text.slice(2), "ascii")) : tlv(0x18, Buffer.from(text, "ascii"));
}

function integer(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && bytes[start + 1]! < 0x80) start++;
  const value = bytes.subarray(start);
  return tlv(0x02, value[0]! >= 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value);
}

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split(".").map(Number);
  const bytes = [first! * 40 + second!];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let value = arc >>> 7; value > 0; value >>>= 7) base128.unshift((value & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function bitString(bytes: Buffer): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([0]), bytes]));
}

function sequence(...items: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(items));
}

function set(...items: Buffer[]): Buffer {
  return tlv(0x31, Buffer.concat(items));
}

function explicit(tag: number, inner: Buffer): Buffer {
  return tlv(0xa0 | tag, inner);
}

function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), content]);
  const octets: number[] = [];
  for (let value = length; value > 0; value >>>= 8) octets.unshift(value & 0xff);
  return Buffer.concat([Buffer.from([tag, 0x80 | octets.length, ...octets]), content]);
}
