/**
 * The one reading of a network policy: whether a destination may be reached, which rule said so, and
 * which headers go on a request to it. The local runtime's proxy and the Worker's outbound handler
 * both call these, so a policy means the same in both places.
 *
 * A destination is what is known of it: the names it goes by (the Host or SNI of a request, the names
 * our resolver gave out for an address), the address connected to, and the port. Deny rules are read
 * first: one that matches any of these denies, whatever allows it; then an allow rule; then the default.
 */
import { cidrContains, parseAddress, parseCidr, SECRET_PLACEHOLDER, type InjectionRule, type NetworkPolicy, type NetworkRule } from "./network.ts";

export interface Destination {
  /** Names the destination goes by (lower case, no trailing dot). */
  names: readonly string[];
  /** The address, when known. */
  ip?: string;
  port: number;
}

export interface Verdict {
  allowed: boolean;
  /** The deciding rule's name, `rules[i]`, or `default`. */
  rule: string;
}

export function decide(policy: NetworkPolicy, destination: Destination): Verdict {
  for (const action of ["deny", "allow"] as const) {
    const index = policy.rules.findIndex((rule) => rule.action === action && ruleMatches(rule, destination));
    if (index >= 0) return { allowed: action === "allow", rule: ruleLabel(policy.rules[index]!, index) };
  }
  return { allowed: policy.default === "allow", rule: "default" };
}

/** Whether a host pattern covers a name: the name itself, or (for `*.domain`) any name under the domain. */
export function hostMatches(pattern: string, name: string): boolean {
  const host = normalizeHost(name);
  if (pattern.startsWith("*.")) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return host === pattern;
}

/** A name as rules compare it: lower case, without a trailing dot or an IPv6 literal's brackets. */
export function normalizeHost(name: string): string {
  const lower = name.toLowerCase().replace(/\.$/, "");
  return lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
}

export function portMatches(ports: readonly (number | string)[] | undefined, port: number): boolean {
  if (ports === undefined) return true;
  return ports.some((entry) => {
    if (typeof entry === "number") return entry === port;
    const [low, high] = entry.split("-").map(Number) as [number, number];
    return port >= low && port <= high;
  });
}

function ruleMatches(rule: NetworkRule, destination: Destination): boolean {
  if (!portMatches(rule.ports, destination.port)) return false;
  if (rule.host !== undefined) return destination.names.some((name) => hostMatches(rule.host!, name));
  if (rule.cidr !== undefined) {
    // An address literal given as the name counts as the address (https://10.0.0.1/ has no other).
    const addresses = [destination.ip, ...destination.names].flatMap((text) => {
      const parsed = text === undefined ? undefined : parseAddress(text);
      return parsed ? [parsed] : [];
    });
    const cidr = parseCidr(rule.cidr)!;
    return addresses.some((address) => cidrContains(cidr, address));
  }
  return true;
}

function ruleLabel(rule: { name?: string | undefined }, index: number, list = "rules"): string {
  return rule.name ?? `${list}[${index}]`;
}

/** What our proxy adds to a request: the headers, the rule, and the secrets it could not find. */
export interface Injection {
  headers: Record<string, string>;
  rule: string;
  /** Secret names the rule uses that are not set: its headers are not sent at all. */
  missing: string[];
}

/** The first injection rule for `host`:`port`, its headers filled in from `secrets`; undefined when none applies. */
export function injectionFor(policy: NetworkPolicy, host: string, port: number, secrets: ReadonlyMap<string, string>): Injection | undefined {
  const index = policy.inject.findIndex((rule) => hostMatches(rule.host, host) && portMatches(rule.ports, port));
  if (index < 0) return undefined;
  const rule = policy.inject[index]!;
  const label = ruleLabel(rule, index, "inject");
  const missing = new Set<string>();
  const secret = (name: string) => {
    const value = secrets.get(name);
    if (value === undefined) missing.add(name);
    return value ?? "";
  };
  const headers = templateHeaders(rule, secret);
  // A header with a hole where a secret should be would be a wrong credential: none is sent.
  if (missing.size > 0) return { headers: {}, rule: label, missing: [...missing] };
  return { headers, rule: label, missing: [] };
}

function templateHeaders(rule: InjectionRule, secret: (name: string) => string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, template] of Object.entries(rule.headers ?? {})) {
    headers[name.toLowerCase()] = template.replace(SECRET_PLACEHOLDER, (_match, secretName: string) => secret(secretName));
  }
  if (rule.bearer) headers.authorization = `Bearer ${secret(rule.bearer)}`;
  if (rule.basic) headers.authorization = `Basic ${base64(`${rule.basic.username}:${secret(rule.basic.secret)}`)}`;
  return headers;
}

function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

/**
 * Every secret value in `text` replaced by its name: what goes into a log or an error that might
 * have seen a request's headers. Longest values first, so one secret inside another is not half-shown.
 */
export function redactSecrets(text: string, secrets: ReadonlyMap<string, string>): string {
  const entries = [...secrets.entries()].filter(([, value]) => value.length > 0).sort((a, b) => b[1].length - a[1].length);
  let out = text;
  for (const [name, value] of entries) out = out.split(value).join(`[secret ${name}]`);
  return out;
}

/**
 * Whether our resolver answers for a name (before any port is known): not where a deny for every
 * port names it; yes where an allow rule names it or one of its addresses, or allows any destination
 * on some port; else the default. The addresses it answers with are those no deny for every port covers.
 */
export function resolvable(policy: NetworkPolicy, name: string, addresses: readonly string[]): Verdict & { addresses: string[] } {
  const everyPort = (rule: NetworkRule) => rule.ports === undefined;
  const denyName = policy.rules.findIndex((rule) => rule.action === "deny" && everyPort(rule) && rule.host !== undefined && hostMatches(rule.host, name));
  if (denyName >= 0) return { allowed: false, rule: ruleLabel(policy.rules[denyName]!, denyName), addresses: [] };
  const kept = addresses.filter((ip) => !policy.rules.some((rule) => rule.action === "deny" && everyPort(rule) && rule.cidr !== undefined && ruleMatches(rule, { names: [], ip, port: 0 })));
  if (kept.length === 0 && addresses.length > 0) {
    const index = policy.rules.findIndex((rule) => rule.action === "deny" && everyPort(rule) && rule.cidr !== undefined);
    return { allowed: false, rule: ruleLabel(policy.rules[index]!, index), addresses: [] };
  }
  const allow = policy.rules.findIndex(
    (rule) =>
      rule.action === "allow" &&
      (rule.host !== undefined ? hostMatches(rule.host, name) : rule.cidr !== undefined ? kept.some((ip) => ruleMatches({ ...rule, ports: undefined }, { names: [], ip, port: 0 })) : true),
  );
  if (allow >= 0) return { allowed: true, rule: ruleLabel(policy.rules[allow]!, allow), addresses: kept };
  return { allowed: policy.default === "allow", rule: "default", addresses: policy.default === "allow" ? kept : [] };
}
