/**
 * The sandbox's resolver (10.0.2.3:53 inside). It answers from the policy: a name the policy denies
 * on every port does not resolve (NXDOMAIN); an allowed one gets the addresses the runtime's own
 * resolver finds, and those addresses are remembered as that name's, so a later TCP connection to
 * them is judged by the name as well (and the namespace's firewall lets it reach the proxy: the
 * answer waits for that). Only A questions are asked upstream, and only for names the
 * policy lets resolve: DNS carries nothing out that the policy does not allow. AAAA gets an empty
 * answer (the namespace has no IPv6 way out); any other type is not implemented.
 *
 * Where workerd runs the container, a name the Worker's interceptions cover always resolves: as
 * above where it may and has an address, else to the placeholder address that leads only to the
 * Worker (workerd-egress.ts). With the container's internet off, nothing is asked upstream at all:
 * covered names get the placeholder, others no answer (NXDOMAIN), as workerd's sidecar answers.
 */
import type { Socket as DatagramSocket, RemoteInfo } from "node:dgram";
import { resolvable } from "../../protocol/network-policy.ts";
import { DNS_RCODES, DNS_TYPES, readQuery, writeAnswer } from "./dns-message.ts";
import type { EgressFlows } from "./egress-flows.ts";
import { neverReached, resolveTargets } from "./upstream.ts";
import { INTERNET_RULE, PLACEHOLDER_ADDRESS, WORKER_RULE } from "./workerd-egress.ts";

export function serveDns(socket: DatagramSocket, egress: EgressFlows): void {
  socket.on("message", (message: Buffer, from: RemoteInfo) => {
    void answer(egress, message).then((reply) => {
      if (reply) socket.send(reply, from.port, from.address);
    });
  });
  socket.on("error", () => undefined);
}

async function answer(egress: EgressFlows, message: Buffer): Promise<Buffer | undefined> {
  const query = readQuery(message);
  if (!query) return undefined;
  const name = query.name;
  const audit = (decision: "allowed" | "denied", rule: string, reason?: string) =>
    egress.audit.add({ kind: "dns", host: name, bytesOut: message.length, bytesIn: 0, decision, rule, ...(reason ? { reason } : {}) });
  if (query.type !== DNS_TYPES.A && query.type !== DNS_TYPES.AAAA) {
    audit("denied", "resolver", `query type ${query.type} is not answered`);
    return writeAnswer(query, DNS_RCODES.notImplemented);
  }
  const workerd = egress.workerd;
  // A name the Worker's interceptions cover resolves, to the placeholder where nothing else answers for it.
  const toWorker = async (why: string): Promise<Buffer> => {
    if (query.type === DNS_TYPES.AAAA) return writeAnswer(query, DNS_RCODES.noError);
    try {
      await egress.rememberNames([PLACEHOLDER_ADDRESS], name);
    } catch (error) {
      audit("denied", "resolver", `the namespace's firewall could not be told: ${(error as Error).message}`);
      return writeAnswer(query, DNS_RCODES.serverFailure);
    }
    audit("allowed", WORKER_RULE, why);
    return writeAnswer(query, DNS_RCODES.noError, [PLACEHOLDER_ADDRESS]);
  };
  const covered = workerd?.mayClaim(name) ?? false;
  if (workerd && !workerd.internetEnabled) {
    if (covered) return toWorker("the container's internet is off: the Worker's interception alone answers for it");
    audit("denied", INTERNET_RULE, "the container's internet is off (enableInternet: false), and no interception covers this name");
    return writeAnswer(query, DNS_RCODES.nameError);
  }
  const synthetic = egress.testHosts?.syntheticAddress(name);
  // Judged by the name first: a name no rule could allow is never asked of any resolver.
  const byName = resolvable(egress.policy, name, []);
  const cidrsMayAllow = egress.policy.rules.some((rule) => rule.action === "allow" && rule.cidr !== undefined);
  if (!byName.allowed && (byName.rule !== "default" || !cidrsMayAllow || synthetic)) {
    if (covered) return toWorker("the policy does not let this name resolve: the Worker's interception answers for it");
    audit("denied", byName.rule, "the policy does not let this name resolve");
    return writeAnswer(query, DNS_RCODES.nameError);
  }
  if (query.type === DNS_TYPES.AAAA) return writeAnswer(query, DNS_RCODES.noError);
  let addresses: string[];
  try {
    addresses = synthetic ? [synthetic] : (await resolveTargets(name, 0, undefined)).map((target) => target.host).filter((ip) => !neverReached(ip));
  } catch {
    addresses = [];
  }
  const verdict = synthetic ? byName : resolvable(egress.policy, name, addresses);
  if (!verdict.allowed) {
    if (covered) return toWorker("the policy does not let this name resolve: the Worker's interception answers for it");
    audit("denied", verdict.rule, "the policy does not let this name resolve");
    return writeAnswer(query, DNS_RCODES.nameError);
  }
  const given = synthetic ? [synthetic] : verdict.addresses;
  if (given.length === 0) {
    if (covered) return toWorker("no address found: the Worker's interception answers for it");
    audit("allowed", verdict.rule, "no address found");
    return writeAnswer(query, DNS_RCODES.nameError);
  }
  try {
    await egress.rememberNames(given, name);
  } catch (error) {
    audit("denied", "resolver", `the namespace's firewall could not be told: ${(error as Error).message}`);
    return writeAnswer(query, DNS_RCODES.serverFailure);
  }
  audit("allowed", verdict.rule);
  return writeAnswer(query, DNS_RCODES.noError, given);
}
