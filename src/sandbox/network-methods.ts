/**
 * The Durable Object's egress methods: the network policy, its secrets and the audit trail. A
 * policy's HTTP and HTTPS take one path, on Cloudflare and locally: the Worker's outbound handler
 * (cloudflare-egress/), registered through the platform's interception (locally workerd's own,
 * through the runtime's egress proxy), asking this object to judge each request. Locally the
 * runtime's proxy is also told of every change at once, for what only it sees: name lookups, raw TCP
 * and ports other than HTTP's and HTTPS's, the host's own addresses, each connection.
 */
import { auditQuerySchema, auditResumeSchema, networkPolicySchema, secretNameSchema, setSecretRequestSchema, type NetworkPolicyState } from "../../protocol/network.ts";
import { errorFromCode } from "../rpc/errors.ts";
import { EGRESS_HANDLER } from "./cloudflare-egress/outbound-handler.ts";
import { auditEventStream } from "./network-audit-stream.ts";
import { parseRequest } from "./request.ts";
import { runtimeCall } from "./runtime-errors.ts";
import type { FamilyMethods, SandboxShell } from "./shell.ts";

export const networkMethods = {
  /**
   * A new network policy, in force at once for running processes (connections it denies are cut).
   * On Cloudflare a policy with a part the platform cannot enforce is refused rather than kept
   * unenforced, and the internet switch it needs applies from the container's next start.
   */
  setNetworkPolicy: (shell, policy) =>
    shell.guard(async () => {
      const checked = parseRequest(networkPolicySchema, policy, "network policy");
      if (!shell.runtime) {
        shell.platformEgress.refuseGaps(checked);
        await shell.network.setPolicy(checked);
        shell.object.enableInternet = shell.platformEgress.internetFor(checked);
        await shell.object.setOutboundHandler(EGRESS_HANDLER);
        await shell.platformEgress.intercepting();
        return networkState(shell);
      }
      await shell.network.setPolicy(checked);
      await pushEgress(shell);
      // The same interception as on Cloudflare: the container's HTTP and HTTPS reach the handler through workerd.
      await shell.object.setOutboundHandler(EGRESS_HANDLER);
      await shell.platformEgress.intercepting();
      return networkState(shell);
    }),

  getNetworkPolicy: (shell) => shell.guard(() => networkState(shell)),

  /** Write-only: the value goes to the proxy that injects it, and is never read back. */
  setSecret: (shell, name, value) =>
    shell.guard(async () => {
      const checkedName = parseRequest(secretNameSchema, name, "secret name");
      const { value: checkedValue } = parseRequest(setSecretRequestSchema, { value }, "secret");
      const info = await shell.network.setSecret(checkedName, checkedValue);
      await pushEgress(shell);
      return info;
    }),

  listSecrets: (shell) => shell.guard(() => shell.network.listSecrets()),

  deleteSecret: (shell, name) =>
    shell.guard(async () => {
      if (!(await shell.network.deleteSecret(name))) throw errorFromCode("SECRET_NOT_FOUND", `No secret named "${name}"`, { context: { name } });
      await pushEgress(shell);
      return { name, deleted: true as const };
    }),

  /**
   * Outbound connections, requests and lookups after `since`. Locally one trail, the runtime's: its
   * proxy's connections and lookups, and the requests the outbound handler judged. On Cloudflare the
   * handler's alone, in the Durable Object's ring.
   */
  getNetworkAudit: (shell, query = {}) =>
    shell.guard(async () => {
      const local = shell.runtime;
      const checked = parseRequest(auditQuerySchema, query, "audit query");
      if (!local) return shell.platformEgress.read(checked.since ?? 0, checked.limit);
      return runtimeCall(() => local.egressAudit(checked));
    }),

  /** The audit trail as it grows, as Server-Sent Events from after `resume.since`. Watching it neither starts the container nor keeps it awake. */
  streamNetworkAudit: (shell, resume = {}) =>
    shell.guard(async () => {
      const local = shell.runtime;
      const { since } = parseRequest(auditResumeSchema, resume, "audit resume point");
      if (!local) return auditEventStream((from, waitMs, signal) => shell.platformEgress.read(from, undefined, waitMs, signal), since);
      return auditEventStream((from, waitMs, signal) => runtimeCall(() => local.egressAudit({ since: from }, waitMs, signal)), since);
    }),

  /**
   * For the Worker's outbound handler (never a /v1 route): judges one request the container sent
   * out, and answers the headers to add to it, secrets filled in, for that request only.
   */
  judgeEgress: (shell, request) => shell.guard(() => shell.platformEgress.judge(request)),

  /** For the Worker's outbound handler: the audit entry of a request it let through, once its answer ended. */
  recordEgress: (shell, record) => shell.guard(async () => shell.platformEgress.record(record)),
} satisfies FamilyMethods;

/** `enforced`: the sandbox's running container sends its traffic only through the proxy (a container with network). */
async function networkState(shell: SandboxShell): Promise<NetworkPolicyState> {
  const policy = await shell.network.policy();
  const local = shell.runtime;
  const enforced = local
    ? shell.ctx.container?.running === true && (await runtimeCall(() => local.state())).egressProxy === true
    : await shell.platformEgress.enforced(policy, shell.ctx.container?.running === true);
  return { policy, enforced, missingSecrets: await shell.network.missingSecrets(policy) };
}

/** The local runtime's proxy learns of a change at once (it keeps it for the next start too). */
async function pushEgress(shell: SandboxShell): Promise<void> {
  const local = shell.runtime;
  if (!local) return;
  const egress = await shell.network.runtimeEgress();
  await runtimeCall(() => local.setEgress(egress));
}
