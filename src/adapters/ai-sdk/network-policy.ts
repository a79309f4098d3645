/**
 * The harness's network policies and request transformations on the service's egress
 * (docs/egress.md). `allow-all` is the network on with an open policy; `deny-all` the network off
 * (loopback only); `custom` the network on with a policy that denies by default and allows the
 * listed hosts and CIDRs, the denied CIDRs winning. A request transformation is an injection rule:
 * its header values become write-only secrets of the sandbox, and the rule names them, so the values
 * never enter the sandbox. A transformation that matches on more than the host (path, method, query,
 * headers) is refused with a coded NOT_SUPPORTED rather than applied more widely than asked.
 * Where the service cannot enforce a policy (NETWORK_POLICY_UNAVAILABLE), that is the harness's
 * capability error too.
 */
import type { HarnessV1NetworkPolicy, HarnessV1RequestTransformation } from "@ai-sdk/harness";
import type { InjectionRule, NetworkPolicyInput, NetworkRule } from "../../../protocol/network.ts";
import type { SandboxClient } from "../../client/index.ts";
import { asHarness, EdgeSandboxCapabilityUnsupportedError, hasCode } from "./errors.ts";

/** Secrets this adapter made for transformations: replaced whole by each setRequestTransformations. */
const SECRET_PREFIX = "AI_SDK_TRANSFORM_";

export async function applyNetworkPolicy(client: SandboxClient, policy: HarnessV1NetworkPolicy): Promise<void> {
  await asHarness(async () => {
    if (policy.mode === "deny-all") {
      await client.configure({ allowNetwork: false });
      return;
    }
    const { policy: current } = await client.getNetworkPolicy();
    const rules: NetworkRule[] =
      policy.mode === "allow-all"
        ? []
        : [
            ...(policy.allowedHosts ?? []).map((host): NetworkRule => ({ action: "allow", host })),
            ...(policy.allowedCIDRs ?? []).map((cidr): NetworkRule => ({ action: "allow", cidr })),
            ...(policy.deniedCIDRs ?? []).map((cidr): NetworkRule => ({ action: "deny", cidr })),
          ];
    await setPolicy(client, { default: policy.mode === "allow-all" ? "allow" : "deny", rules, inject: current.inject });
    await client.configure({ allowNetwork: true });
  });
}

/** Replaces the transformations this adapter installed (`add`: keeps them and adds these). */
export async function applyRequestTransformations(client: SandboxClient, transformations: ReadonlyArray<HarnessV1RequestTransformation>, add: boolean): Promise<void> {
  for (const { match } of transformations) {
    const extra = (["path", "method", "queryString", "headers"] as const).filter((key) => match[key] !== undefined);
    if (extra.length > 0) {
      throw new EdgeSandboxCapabilityUnsupportedError(`request transformations match on the host only; this one also matches on ${extra.join(", ")}`);
    }
  }
  await asHarness(async () => {
    const { policy } = await client.getNetworkPolicy();
    const ours = (rule: InjectionRule) => Object.values(rule.headers ?? {}).some((value) => value.includes(`{{secrets.${SECRET_PREFIX}`));
    const kept = add ? policy.inject : policy.inject.filter((rule) => !ours(rule));
    const taken = new Set((await client.listSecrets()).map((secret) => secret.name).filter((name) => name.startsWith(SECRET_PREFIX)));
    let next = 0;
    const newName = () => {
      while (taken.has(`${SECRET_PREFIX}${next}`)) next++;
      taken.add(`${SECRET_PREFIX}${next}`);
      return `${SECRET_PREFIX}${next}`;
    };
    const added: InjectionRule[] = [];
    for (const { match, transform } of transformations) {
      const headers: Record<string, string> = {};
      for (const [header, value] of Object.entries(transform.headers)) {
        const name = newName();
        await client.setSecret(name, value);
        headers[header] = `{{secrets.${name}}}`;
      }
      added.push({ host: match.host, headers });
    }
    await setPolicy(client, { ...policy, inject: [...kept, ...added] });
    if (!add) {
      const named = new Set([...kept, ...added].flatMap((rule) => Object.values(rule.headers ?? {})).join(" ").match(new RegExp(`${SECRET_PREFIX}\\d+`, "g")) ?? []);
      for (const name of taken) if (!named.has(name)) await client.deleteSecret(name).catch(() => undefined);
    }
  });
}

async function setPolicy(client: SandboxClient, policy: NetworkPolicyInput): Promise<void> {
  try {
    await client.setNetworkPolicy(policy);
  } catch (error) {
    if (hasCode(error, "NETWORK_POLICY_UNAVAILABLE")) throw new EdgeSandboxCapabilityUnsupportedError((error as Error).message);
    throw error;
  }
}
