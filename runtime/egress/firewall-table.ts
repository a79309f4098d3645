/**
 * The nftables table of a sandbox's network namespace, as namespace-helper.ts loads it once: every
 * outbound TCP connection is handed to the proxy's listener by TPROXY, and every other packet for
 * elsewhere is rejected; before that, the policy's own chain (empty until the runtime fills it:
 * firewall-rules.ts) refuses what the address and port alone decide. Kept apart from the policy's
 * rules so the helper, which runs in the namespace, imports nothing more than it needs.
 *
 * TPROXY, not a redirect: the packet keeps its destination, and the listener (a transparent socket)
 * accepts it as it is, so the accepted socket's own local address and port are where the sandbox
 * was going. Nothing is translated, so nothing has to be looked up in the connection tracking
 * table (which grows with every connection the sandbox holds). Locally made packets never pass
 * prerouting, where TPROXY works: they are marked on their way out, and the mark routes them
 * (PROXY_ROUTE) back in through loopback.
 */
import { NAMESPACE_ADDRESSES } from "./namespace-addresses.ts";

export const FIREWALL = { table: "sandbox_egress", policyChain: "by_policy", namedSet: "named" } as const;

/** The packet mark of a sandbox's outbound TCP, and the routing table that takes marked packets back in (any address is local there). */
export const PROXY_ROUTE = { mark: 1, table: 100 } as const;

/** The table the namespace starts with: the policy's (empty) chain, the proxy's interception, and rejection of everything else. */
export function baseTable(listenerPort: number): string {
  const { sandbox, resolver } = NAMESPACE_ADDRESSES;
  const local = `{ 127.0.0.0/8, ${sandbox}, ${resolver} }`;
  const { mark } = PROXY_ROUTE;
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
    type route hook output priority -140; policy accept;
    ip daddr ${local} return
    meta nfproto ipv4 meta l4proto tcp meta mark set ${mark}
  }
  chain leaving {
    type filter hook output priority 0; policy accept;
    ip daddr ${local} accept
    ip6 daddr ::1 accept
    meta l4proto tcp meta mark ${mark} accept
    meta l4proto tcp reject with tcp reset
    reject
  }
  chain into_proxy {
    type filter hook prerouting priority -150; policy accept;
    meta l4proto tcp meta mark ${mark} tproxy ip to 127.0.0.1:${listenerPort} accept
    meta mark ${mark} drop
  }
}
`;
}
