/**
 * The policy's own chain in a sandbox's namespace (firewall-table.ts has the table around it), as
 * commands for `nft -f`. Before the redirect to the proxy, it refuses what can be decided from the
 * address and port alone, at the SYN, so the sandbox sees "connection refused" at once:
 *   - deny rules by network (IPv4) or by port alone, and the addresses the proxy never reaches;
 *   - under `default: deny`, an address our resolver never gave out (nor the test name map) that no
 *     allow rule covers by network or port.
 * Everything else (names, HTTP Hosts, TLS server names) goes on to the proxy, which judges it.
 * The chain is rewritten, in one transaction, whenever the policy changes; the set of named
 * addresses grows as the resolver answers, before its answer is sent.
 *
 * Refusals are traced: the namespace's monitor (namespace-firewall.ts) reads each one back, with
 * the rule that refused it, for the audit trail.
 */
import type { NetworkPolicy, NetworkRule } from "../../protocol/network.ts";
import { parseCidr } from "../../protocol/network.ts";
import { FIREWALL } from "./firewall-table.ts";
import { NEVER_REACHED_NETWORKS } from "./upstream.ts";

export interface PolicyChain {
  /** nft commands replacing the policy's chain and its refusing chains (one transaction). */
  text: string;
  /** The refusing chains made, by name: the label of the rule each stands for. */
  labels: Map<string, string>;
}

/**
 * The policy's chain for `policy`. Each refusal jumps to a chain of its own, named for the
 * generation and its place (`r3_1`), which marks the packet for tracing and rejects it: a trace
 * names the chain it happened in, so the monitor knows which rule refused. `previous` are the
 * refusing chains in place now, removed in the same transaction.
 */
export function policyChain(policy: NetworkPolicy, generation: number, previous: Iterable<string> = []): PolicyChain {
  const table = `inet ${FIREWALL.table}`;
  const chain = `${table} ${FIREWALL.policyChain}`;
  const labels = new Map<string, string>();
  const commands = [`flush chain ${chain}`, ...[...previous].map((name) => `delete chain ${table} ${name}`)];
  const refuse = (match: string, label: string) => {
    const name = `r${generation}_${labels.size}`;
    labels.set(name, label);
    commands.push(`add chain ${table} ${name}`, `add rule ${table} ${name} meta nftrace set 1 reject with tcp reset`);
    commands.push(`add rule ${chain} ${match} jump ${name}`.replace("  ", " "));
  };
  refuse(`ip daddr { ${NEVER_REACHED_NETWORKS.filter((cidr) => cidr.includes(".") && !cidr.startsWith("127.")).join(", ")} }`, "never");
  policy.rules.forEach((rule, index) => {
    if (rule.action !== "deny" || rule.host !== undefined) return;
    const match = addressMatch(rule);
    if (match !== undefined) refuse(match, rule.name ?? `rules[${index}]`);
  });
  if (policy.default === "deny") {
    for (const rule of policy.rules) {
      if (rule.action !== "allow" || rule.host !== undefined) continue;
      const match = addressMatch(rule);
      if (match !== undefined) commands.push(`add rule ${chain} ${match} return`.replace("  ", " "));
    }
    commands.push(`add rule ${chain} ip daddr @${FIREWALL.namedSet} return`);
    refuse("", "default");
  }
  return { text: commands.join("\n") + "\n", labels };
}

/** The match of a rule by network and ports; undefined for a rule that can never match here (an IPv6 network: the namespace has no IPv6 way out). */
function addressMatch(rule: NetworkRule): string | undefined {
  const parts: string[] = [];
  if (rule.cidr !== undefined) {
    const parsed = parseCidr(rule.cidr)!;
    if (parsed.family !== 4) return undefined;
    parts.push(`ip daddr ${ipv4Network(parsed.value, parsed.bits)}`);
  }
  if (rule.ports !== undefined) parts.push(`tcp dport { ${rule.ports.join(", ")} }`);
  return parts.join(" ");
}

/** A network as nft reads it (the address masked to its prefix, which nft insists on). */
function ipv4Network(value: bigint, bits: number): string {
  const masked = bits === 0 ? 0n : (value >> BigInt(32 - bits)) << BigInt(32 - bits);
  const address = [24n, 16n, 8n, 0n].map((shift) => String((masked >> shift) & 255n)).join(".");
  return `${address}/${bits}`;
}

/** nft commands adding (or removing) addresses in the set of names our resolver gave out. */
export function namedChange(verb: "add" | "delete", addresses: readonly string[]): string {
  return `${verb} element inet ${FIREWALL.table} ${FIREWALL.namedSet} { ${addresses.join(", ")} }\n`;
}
