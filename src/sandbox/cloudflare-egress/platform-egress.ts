/**
 * A sandbox's egress through the Worker's outbound handler, as its Durable Object keeps it (the
 * Durable Object only delegates here): which policies can be enforced on Cloudflare (platform-gaps.ts),
 * the judging of each request the handler asks about (judge.ts, with the secrets from storage), the
 * audit trail, and whether the policy is in force there: the interception registered and the running
 * container started with the internet switch its policy needs. The operator's ceiling
 * (`SANDBOX_NETWORK_ALLOWED=0`, a Worker variable there) wins over every policy: containers start
 * without the internet and every request the handler sees is refused.
 *
 * Locally (a runtime channel given) the handler judges the same way, but its entries join the
 * runtime's trail for the sandbox (one trail, numbered once, beside the proxy's connections and name
 * lookups), and the requests it lets through are carried out by the runtime (judge.ts `carrier`).
 * On Cloudflare the entries go to the Durable Object's own ring (audit-ring.ts).
 */
import { NETWORK_LIMITS, auditEntrySchema, type AuditPage, type NetworkPolicy } from "../../../protocol/network.ts";
import { errorFromCode } from "../../rpc/errors.ts";
import type { NetworkSettings } from "../network.ts";
import { parseRequest } from "../request.ts";
import type { RuntimeChannel } from "../runtime-channel.ts";
import { runtimeCall } from "../runtime-errors.ts";
import { AuditRing, type AuditRecord } from "./audit-ring.ts";
import { judgeEgress, type EgressJudgement, type EgressRequest } from "./judge.ts";
import { internetFor, platformGaps } from "./platform-gaps.ts";

/** Whether the catch-all interception was registered, and the internet switch the running container started with. */
const STATE_KEY = "network:platform";

interface PlatformState {
  intercepting?: boolean;
  internetAtStart?: boolean;
}

const auditRecordSchema = auditEntrySchema.omit({ seq: true, time: true });

/** The Worker's `SANDBOX_NETWORK_ALLOWED`: unset or "1" allows outbound network; "0", or anything else, closes it (a typo fails closed). */
export function networkAllowedBy(value: string | undefined): boolean {
  return value === undefined || value === "1";
}

export class PlatformEgress {
  readonly #storage: DurableObjectStorage;
  readonly #settings: NetworkSettings;
  readonly #networkAllowed: boolean;
  readonly #runtime: RuntimeChannel | undefined;
  readonly audit: AuditRing;

  constructor(storage: DurableObjectStorage, settings: NetworkSettings, networkAllowed = true, runtime?: RuntimeChannel) {
    this.#storage = storage;
    this.#settings = settings;
    this.#networkAllowed = networkAllowed;
    this.#runtime = runtime;
    this.audit = new AuditRing(storage.sql);
  }

  /** Refuses a policy with a part the platform cannot enforce: 501 NETWORK_POLICY_UNAVAILABLE, naming every such rule. */
  refuseGaps(policy: NetworkPolicy): void {
    const gaps = platformGaps(policy);
    if (gaps.length === 0) return;
    const said = gaps.map((gap) => `${gap.rule}: ${gap.reason}`).join("; ");
    throw errorFromCode("NETWORK_POLICY_UNAVAILABLE", `On Cloudflare this policy cannot be enforced (${said}); the local runtime's proxy can`, { context: { rules: gaps } });
  }

  /** The internet switch a container started now gets. */
  internetFor(policy: NetworkPolicy): boolean {
    return this.#networkAllowed && internetFor(policy);
  }

  async intercepting(): Promise<void> {
    await this.#update({ intercepting: true });
  }

  /** Called at every container start with the switch it got. */
  async started(internet: boolean): Promise<void> {
    await this.#update({ internetAtStart: internet });
  }

  /**
   * In force: the container runs, its HTTP(S) goes to the handler, and it has no internet when the
   * policy's default is deny (a container started with it before the policy came has it until it restarts).
   */
  async enforced(policy: NetworkPolicy, running: boolean): Promise<boolean> {
    if (!running) return false;
    const state = await this.#state();
    return state.intercepting === true && (this.internetFor(policy) || state.internetAtStart === false);
  }

  /** Judges one request with the policy and secrets in storage now; a refusal is recorded at once. */
  async judge(request: EgressRequest): Promise<EgressJudgement> {
    const { method, url } = request as Partial<EgressRequest>;
    if (typeof method !== "string" || typeof url !== "string") throw errorFromCode("INVALID_REQUEST", "an egress request is { method, url }");
    const { policy, secrets } = await this.#settings.runtimeEgress();
    const judged = judgeEgress(policy, new Map(Object.entries(secrets)), { method, url }, this.#networkAllowed);
    if (!judged.allowed) {
      await this.#add(judged.record);
      return judged;
    }
    return this.#runtime ? { ...judged, carrier: this.#runtime.key } : judged;
  }

  async record(record: AuditRecord): Promise<void> {
    await this.#add(parseRequest(auditRecordSchema, record, "audit entry"));
  }

  async #add(record: AuditRecord): Promise<void> {
    const local = this.#runtime;
    if (local) await runtimeCall(() => local.addEgressAudit(record));
    else this.audit.add(record);
  }

  /** A page of the trail, waiting up to `waitMs` for something after `since` (the stream's long poll). */
  async read(since: number, limit: number = NETWORK_LIMITS.maxAuditPage, waitMs = 0, signal?: AbortSignal): Promise<AuditPage> {
    await this.audit.waitAfter(since, waitMs, signal);
    return this.audit.read(since, limit);
  }

  async #state(): Promise<PlatformState> {
    return (await this.#storage.get<PlatformState>(STATE_KEY)) ?? {};
  }

  async #update(change: PlatformState): Promise<void> {
    await this.#storage.put(STATE_KEY, { ...(await this.#state()), ...change });
  }
}
