/**
 * The harness's network policies on the service's network setting, which is on or off for the
 * whole sandbox: `allow-all` allows it, `deny-all` denies it (loopback only). Rules by host or CIDR
 * (`custom`) are not something the service enforces yet, so they are refused with a coded
 * `NOT_SUPPORTED` error rather than applied in part. Changing the setting restarts the sandbox's
 * container (its processes end), as any change of its walls does; an unchanged one does nothing.
 * Where the setting applies: under the local runtime's containers it is the container's network;
 * on Cloudflare the container's own network is what it is.
 */
import type { HarnessV1NetworkPolicy } from "@ai-sdk/harness";
import { EdgeSandboxCapabilityUnsupportedError } from "./errors.ts";

export function allowNetworkFor(policy: HarnessV1NetworkPolicy): boolean {
  switch (policy.mode) {
    case "allow-all":
      return true;
    case "deny-all":
      return false;
    default:
      throw new EdgeSandboxCapabilityUnsupportedError(
        "custom network policies (allowed hosts or CIDRs) are not supported by this sandbox service: use allow-all or deny-all",
      );
  }
}
