/**
 * What of a network policy Cloudflare's containers cannot enforce, said rule by rule, so that such a
 * policy is refused (NETWORK_POLICY_UNAVAILABLE) instead of being kept and silently not enforced.
 *
 * There the Worker sees a container's HTTP (port 80) and HTTPS (port 443) requests, one by one, and
 * nothing else: other traffic follows the container's internet switch (`enableInternet`, on under
 * `default: "allow"`, off under `default: "deny"`, when only ports 80 and 443 leave), and name
 * lookups go to the platform's resolvers. So a rule is refused when it would need more: a port other
 * than 80 and 443 allowed, a deny rule that traffic the Worker never sees could get around, a rule
 * about DNS, or a network denied while names are let through (the Worker never learns the address
 * a name reaches).
 */
import type { NetworkPolicy, NetworkRule } from "../../../protocol/network.ts";
import { portMatches } from "../../../protocol/network-policy.ts";

/** The only ports whose traffic the Worker sees: HTTP and intercepted HTTPS. */
export const INTERCEPTED_PORTS = [80, 443] as const;
const DNS_PORT = 53;

/** One part of a policy the platform cannot enforce, and why. */
export interface PlatformGap {
  /** The rule, as the audit trail names it (`rules[2]`, `inject[0]`, or its name). */
  rule: string;
  reason: string;
}

/** Whether the container gets the internet (non-HTTP traffic, and HTTP the Worker passes by) under this policy. */
export function internetFor(policy: NetworkPolicy): boolean {
  return policy.default === "allow";
}

export function platformGaps(policy: NetworkPolicy): PlatformGap[] {
  const gaps: PlatformGap[] = [];
  const namesLetThrough = policy.default === "allow" || policy.rules.some((rule) => rule.action === "allow" && rule.cidr === undefined);
  policy.rules.forEach((rule, index) => {
    const label = rule.name ?? `rules[${index}]`;
    const reason = ruleGap(policy, rule, namesLetThrough);
    if (reason) gaps.push({ rule: label, reason });
  });
  policy.inject.forEach((rule, index) => {
    if (rule.ports !== undefined && !onlyInterceptedPorts(rule.ports)) {
      gaps.push({ rule: rule.name ?? `inject[${index}]`, reason: "headers can be added on ports 80 and 443 only (the Worker sees no other request)" });
    }
  });
  return gaps;
}

function ruleGap(policy: NetworkPolicy, rule: NetworkRule, namesLetThrough: boolean): string | undefined {
  if (rule.ports !== undefined && portMatches(rule.ports, DNS_PORT)) return "name lookups go to the platform's resolvers, which no rule governs";
  if (rule.action === "deny" && policy.default === "allow") {
    return 'under default "allow" the container has the internet, and traffic other than HTTP and HTTPS would get around a deny rule';
  }
  if (rule.action === "allow" && policy.default === "deny" && rule.ports !== undefined && !onlyInterceptedPorts(rule.ports)) {
    return 'under default "deny" the container has no internet: only HTTP on port 80 and HTTPS on 443 can be allowed';
  }
  if (rule.action === "deny" && rule.cidr !== undefined && namesLetThrough) {
    return "requests by name are allowed, and the Worker never learns which address a name reaches: a network can be denied only where names are not let through";
  }
  return undefined;
}

function onlyInterceptedPorts(ports: readonly (number | string)[]): boolean {
  return ports.every((entry) => {
    if (typeof entry === "number") return (INTERCEPTED_PORTS as readonly number[]).includes(entry);
    const [low, high] = entry.split("-").map(Number) as [number, number];
    return INTERCEPTED_PORTS.filter((port) => port >= low && port <= high).length === high - low + 1;
  });
}
