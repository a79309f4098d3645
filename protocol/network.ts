/**
 * A sandbox's egress, as every side speaks of it: the network policy (where the sandbox may connect,
 * and which headers our proxy adds on the way out), the secrets those headers name (write-only: a
 * name and a value go in, only names come back), and the audit trail of what went out.
 *
 * The policy is the caller's; the operator's ceiling (no network at all) still wins over it. Deny
 * rules win over allow rules; a destination no rule names gets the policy's default. Secrets are
 * named in injection rules, never written into them, so a policy can be read back whole.
 */
import * as z from "zod";
import { resumeQuerySchema } from "./resume.ts";
import { lazySchema } from "./lazy-schema.ts";

export const NETWORK_LIMITS = {
  maxRules: 256,
  maxInjections: 64,
  maxHeadersPerInjection: 16,
  maxSecrets: 64,
  /** A secret is a credential, not a file. */
  maxSecretBytes: 8 * 1024,
  /** Audit entries a sandbox keeps (the oldest go first); a reader that fell behind is told how many it missed. */
  auditEntries: 4096,
  /** Entries one audit read answers with at most. */
  maxAuditPage: 1000,
} as const;

/** A host pattern: a name (`api.example.com`) or every name under a domain (`*.example.com`, not the domain itself). */
export const hostPatternSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(253)
  .transform((value) => value.toLowerCase().replace(/\.$/, ""))
  .refine((value) => /^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/.test(value), {
    message: 'host patterns are names ("api.example.com") or "*.domain" (every name under it)',
  }));

/** An IPv4 or IPv6 address, or a network in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`). */
export const cidrSchema = lazySchema(() => z
  .string()
  .min(2)
  .max(64)
  .refine((value) => parseCidr(value) !== undefined, { message: "cidr must be an IPv4 or IPv6 address or network (10.0.0.0/8, 2001:db8::/32)" }));

/** A port, or an inclusive range of them. */
export const portMatchSchema = lazySchema(() => z.union([
  z.number().int().min(1).max(65535),
  z
    .string()
    .regex(/^\d{1,5}-\d{1,5}$/, 'port ranges look like "8000-8999"')
    .refine((value) => {
      const [low, high] = value.split("-").map(Number) as [number, number];
      return low >= 1 && high <= 65535 && low <= high;
    }, "a port range runs from 1 to 65535, low to high"),
]));

/** One allow or deny rule: a host pattern or a network (or neither: any destination), on some ports (default all). */
export const networkRuleSchema = lazySchema(() => z
  .strictObject({
    action: z.enum(["allow", "deny"]),
    host: hostPatternSchema.optional(),
    cidr: cidrSchema.optional(),
    ports: z.array(portMatchSchema).min(1).max(64).optional(),
    /** Names the rule in the audit trail (default: its place, `rules[3]`). */
    name: z.string().min(1).max(64).optional(),
  })
  .refine((rule) => rule.host === undefined || rule.cidr === undefined, "a rule names a host or a cidr, not both"));
export type NetworkRule = z.output<typeof networkRuleSchema>;

/** A secret's name: what injection rules and the secrets API call it. */
export const secretNameSchema = lazySchema(() => z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "secret names are letters, digits and _ (64 at most), not starting with a digit"));

/** A header name as HTTP allows it. */
const headerNameSchema = lazySchema(() => z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/, "not an HTTP header name"));

/** A header value: text with `{{secrets.NAME}}` where a secret's value goes. No line breaks, which would start another header. */
const headerTemplateSchema = lazySchema(() => z.string().max(8192).refine((value) => !/[\r\n\0]/.test(value), "header values cannot hold CR, LF or NUL"));

/**
 * Headers our proxy sets on requests to matching hosts (replacing what the sandbox sent under those
 * names). `bearer: "NAME"` is `Authorization: Bearer <secret NAME>`; `basic` is HTTP basic auth with
 * the secret as password.
 */
export const injectionRuleSchema = lazySchema(() => z
  .strictObject({
    host: hostPatternSchema,
    ports: z.array(portMatchSchema).min(1).max(64).optional(),
    headers: z.record(headerNameSchema, headerTemplateSchema).optional(),
    bearer: secretNameSchema.optional(),
    basic: z.strictObject({ username: z.string().max(256).refine((value) => !/[:\r\n\0]/.test(value), "no ':' or line breaks"), secret: secretNameSchema }).optional(),
    name: z.string().min(1).max(64).optional(),
  })
  .refine((rule) => rule.headers !== undefined || rule.bearer !== undefined || rule.basic !== undefined, "an injection rule sets headers, bearer or basic")
  .refine((rule) => Object.keys(rule.headers ?? {}).length <= NETWORK_LIMITS.maxHeadersPerInjection, `at most ${NETWORK_LIMITS.maxHeadersPerInjection} headers per rule`));
export type InjectionRule = z.output<typeof injectionRuleSchema>;

export const networkPolicySchema = lazySchema(() => z.strictObject({
  /** What a destination no rule names gets. */
  default: z.enum(["allow", "deny"]),
  rules: z.array(networkRuleSchema).max(NETWORK_LIMITS.maxRules).default([]),
  inject: z.array(injectionRuleSchema).max(NETWORK_LIMITS.maxInjections).default([]),
}));
export type NetworkPolicy = z.output<typeof networkPolicySchema>;
export type NetworkPolicyInput = z.input<typeof networkPolicySchema>;

/** A sandbox that was never given a policy: out to anywhere, as network on has always meant. */
export const OPEN_POLICY: NetworkPolicy = { default: "allow", rules: [], inject: [] };

/** `{{secrets.NAME}}` in a header template. */
export const SECRET_PLACEHOLDER = /\{\{\s*secrets\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The secret names a policy's injections use. */
export function secretsNamed(policy: NetworkPolicy): string[] {
  const names = new Set<string>();
  for (const rule of policy.inject) {
    if (rule.bearer) names.add(rule.bearer);
    if (rule.basic) names.add(rule.basic.secret);
    for (const value of Object.values(rule.headers ?? {})) for (const match of value.matchAll(SECRET_PLACEHOLDER)) names.add(match[1]!);
  }
  return [...names];
}

/**
 * Set on a container server whose sandbox's TLS goes through an intercepting proxy: the trust bundle
 * (the system's authorities and the proxy's) that commands are pointed at, by the variables Node,
 * Python, curl and git read.
 */
export { CA_BUNDLE_VAR } from "./server-env-names.ts";
export const CA_BUNDLE_VARIABLES = ["SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"] as const;

// ── the API's answers ────────────────────────────────────────────────────────

/** `getNetworkPolicy()`: the policy, and whether it is in force (a sandbox without network has none to govern). */
export const networkPolicyStateSchema = lazySchema(() => z.strictObject({
  policy: networkPolicySchema,
  /**
   * True while the sandbox's running container sends its traffic only through our proxy. False when
   * it is not running, has no network (allowNetwork off, or the operator's ceiling), or is not a
   * container of its own (the local runtime's `none` mode shares the host's network).
   */
  enforced: z.boolean(),
  /** Secrets the policy names that are not set: their headers are not sent. */
  missingSecrets: z.array(z.string()),
}));
export type NetworkPolicyState = z.output<typeof networkPolicyStateSchema>;

export const setSecretRequestSchema = lazySchema(() => z.strictObject({
  value: z
    .string()
    .min(1)
    .refine((value) => new TextEncoder().encode(value).byteLength <= NETWORK_LIMITS.maxSecretBytes, `a secret is at most ${NETWORK_LIMITS.maxSecretBytes} bytes`)
    .refine((value) => !/[\r\n\0]/.test(value), "secrets go into headers: no CR, LF or NUL"),
}));

/** What the API says of a secret: never its value. */
export const secretInfoSchema = lazySchema(() => z.strictObject({ name: z.string(), updatedAt: z.string() }));
export type SecretInfo = z.output<typeof secretInfoSchema>;

export const deleteSecretResultSchema = lazySchema(() => z.strictObject({ name: z.string(), deleted: z.literal(true) }));

// ── the audit trail ──────────────────────────────────────────────────────────

export const AUDIT_DECISIONS = ["allowed", "denied", "injected"] as const;

/** One outbound connection, HTTP request or name lookup, as the proxy saw it. */
export const auditEntrySchema = lazySchema(() => z.strictObject({
  /** From 1, per sandbox: resume after it. */
  seq: z.number().int().positive(),
  time: z.string(),
  kind: z.enum(["tcp", "http", "https", "dns"]),
  /** The name asked for (Host, SNI, the DNS question), when there is one. */
  host: z.string().optional(),
  /** The address connected to (or the one the sandbox dialed, when denied). */
  ip: z.string().optional(),
  port: z.number().int().optional(),
  method: z.string().optional(),
  path: z.string().optional(),
  status: z.number().int().optional(),
  bytesOut: z.number().int(),
  bytesIn: z.number().int(),
  decision: z.enum(AUDIT_DECISIONS),
  /** The rule that decided (`default` when none did). */
  rule: z.string(),
  /** Why, for a denial or a failure (never a secret). */
  reason: z.string().optional(),
}));
export type AuditEntry = z.output<typeof auditEntrySchema>;

export const auditQuerySchema = lazySchema(() => z.strictObject({
  since: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(NETWORK_LIMITS.maxAuditPage).optional(),
}));
export type AuditQuery = z.output<typeof auditQuerySchema>;

export const auditPageSchema = lazySchema(() => z.strictObject({
  entries: z.array(auditEntrySchema),
  /** Pass as `since` to read on. */
  next: z.number().int().min(0),
  /** Entries after `since` that were dropped before this read (the log is bounded). */
  dropped: z.number().int().min(0),
}));
export type AuditPage = z.output<typeof auditPageSchema>;

/**
 * The audit trail as Server-Sent Events (`streamNetworkAudit`): each entry as an `audit` event whose
 * SSE id is its `seq`, and, when entries fell out of the ring before the reader got them, a
 * `dropped` event with how many, whose id is the last of them (so resuming after it reads on).
 * A reconnecting reader sends Last-Event-ID or `?since=` and gets exactly what came after.
 */
export const auditStreamQuerySchema = lazySchema(() => resumeQuerySchema.pick({ since: true }));
/** Where an RPC caller resumes the stream: after this seq (default 0, from the oldest entry kept). */
export const auditResumeSchema = lazySchema(() => z.strictObject({ since: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional() }));
export type AuditResume = z.output<typeof auditResumeSchema>;

export const auditEventSchema = lazySchema(() => z.discriminatedUnion("type", [
  auditEntrySchema.extend({ type: z.literal("audit") }),
  z.strictObject({ type: z.literal("dropped"), seq: z.number().int().min(0), count: z.number().int().positive() }),
]));
export type AuditEvent = z.output<typeof auditEventSchema>;
export const AUDIT_STREAM_EVENTS = "audit (an entry; its id is seq), dropped (count, entries that fell out of the bounded log before they were read), error (code: the stream cannot go on)";

// ── addresses (used by the matcher on both sides) ────────────────────────────

/** An address as a number and its family. */
export interface ParsedAddress {
  family: 4 | 6;
  value: bigint;
}

export function parseAddress(text: string): ParsedAddress | undefined {
  const v4 = parseV4(text);
  if (v4 !== undefined) return { family: 4, value: v4 };
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const v6 = parseV6(bare);
  if (v6 === undefined) return undefined;
  // An IPv4-mapped IPv6 address is the IPv4 address: rules for one hold for the other.
  if (v6 >> 32n === 0xffffn) return { family: 4, value: v6 & 0xffffffffn };
  return { family: 6, value: v6 };
}

export interface ParsedCidr extends ParsedAddress {
  bits: number;
}

export function parseCidr(text: string): ParsedCidr | undefined {
  const [address, bitsText, extra] = text.split("/");
  if (extra !== undefined || address === undefined) return undefined;
  const parsed = parseAddress(address);
  if (!parsed) return undefined;
  const width = parsed.family === 4 ? 32 : 128;
  const mappedShift = parsed.family === 4 && address.includes(":") ? 96 : 0;
  const bits = bitsText === undefined ? width : Number(bitsText) - mappedShift;
  if (bitsText !== undefined && !/^\d{1,3}$/.test(bitsText)) return undefined;
  if (!Number.isInteger(bits) || bits < 0 || bits > width) return undefined;
  return { ...parsed, bits };
}

export function cidrContains(cidr: ParsedCidr, address: ParsedAddress): boolean {
  if (cidr.family !== address.family) return false;
  const width = BigInt(cidr.family === 4 ? 32 : 128);
  const shift = width - BigInt(cidr.bits);
  return cidr.value >> shift === address.value >> shift;
}

function parseV4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return undefined;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseV6(text: string): bigint | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || text.length < 2) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === "") return [];
    const out: number[] = [];
    const pieces = half.split(":");
    for (const [index, piece] of pieces.entries()) {
      if (index === pieces.length - 1 && piece.includes(".")) {
        const v4 = parseV4(piece);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) out.push(parseInt(piece, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return all.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}
