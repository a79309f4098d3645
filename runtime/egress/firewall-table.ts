/**
 * The nftables table of a sandbox's network namespace, as namespace-helper.ts loads it once: every
 * outbound TCP connection is redirected to the proxy's listener and every other packet for elsewhere
 * is rejected; before the redirect, the policy's own chain (empty until the runtime fills it:
 * firewall-rules.ts) refuses what the address and port alone decide. Kept apart from the policy's
 * rules so the helper, which runs in the namespace, imports nothing more than it needs.
 */
import { NAMESPACE_ADDRESSES } from "./namespace-addresses.ts";

export const FIREWALL = { table: "sandbox_egress", policyChain: "by_policy", namedSet: "named" } as const;

/** The table the namespace starts with: the proxy's redirect, the policy's (empty) chain, and rejection of everything else. */
export function baseTable(listenerPort: number): string {
  const { sandbox, resolver } = NAMESPACE_ADDRESSES;
  const local = `{ 127.0.0.0/8, ${sandbox}, ${resolver} }`;
  return `table inet ${FIREWALL.table} {
  set ${FIREWALL.namedSet} {
    type ipv4_addr
  }
  chain ${FIREWALL.policyChain} {
  }
  chain refuse {
    type filter hook output priority -150; policy accept;
    ip daddr ${local} return
    meta l4proto tcp ct state new jump ${FIREWALL.policyChain}
  }
  chain to_proxy {
    type nat hook output priority -100; policy accept;
    ip daddr ${local} return
    ip6 daddr ::1 return
    meta l4proto tcp redirect to :${listenerPort}
  }
  chain leaving {
    type filter hook output priority 0; policy accept;
    ip daddr ${local} accept
    ip6 daddr ::1 accept
    meta l4proto tcp reject with tcp reset
    reject
  }
}
`;
}

