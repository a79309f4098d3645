/**
 * Where the proxy connects on a sandbox's behalf. Names are resolved by the runtime (never trusted
 * from the sandbox: a request names its host, and goes to that host's addresses, whatever address
 * the sandbox dialed). Some addresses are never reached whatever a policy says: this machine's
 * loopback (the runtime's own API listens there), unspecified, link-local (cloud metadata) and
 * multicast ones. Only the test name map leads to loopback.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { cidrContains, parseAddress, parseCidr, type ParsedCidr } from "../../protocol/network.ts";
import type { TestHostMap } from "./test-hosts.ts";

export const NEVER_REACHED_NETWORKS = ["127.0.0.0/8", "0.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "255.255.255.255/32", "::1/128", "::/128", "fe80::/10", "ff00::/8"] as const;
const NEVER_REACHED: readonly ParsedCidr[] = NEVER_REACHED_NETWORKS.map((text) => parseCidr(text)!);

/** Why an address is never reached, or undefined when it may be. */
export function neverReached(address: string): string | undefined {
  const parsed = parseAddress(address);
  if (!parsed) return "not an address";
  return NEVER_REACHED.some((cidr) => cidrContains(cidr, parsed)) ? `${address} is this machine's or not routable (loopback, link-local, multicast)` : undefined;
}

export interface Target {
  /** Where to connect. */
  host: string;
  port: number;
  /** The test name map's target: loopback allowed. */
  mapped: boolean;
}

/** The addresses of `name` for a connection on `port`: the test map's target, an address literal, or the host's resolver's answer. */
export async function resolveTargets(name: string, port: number, testHosts: TestHostMap | undefined): Promise<Target[]> {
  const mapped = testHosts?.target(name, port);
  if (mapped) return [{ ...mapped, mapped: true }];
  const bare = name.startsWith("[") && name.endsWith("]") ? name.slice(1, -1) : name;
  if (isIP(bare)) return [{ host: bare, port, mapped: false }];
  const answers = await lookup(bare, { all: true, family: 4 });
  return answers.map((answer) => ({ host: answer.address, port, mapped: false }));
}
