/**
 * One sandbox's egress as the runtime holds it: the policy and secrets its Durable Object last gave,
 * the audit trail, the names our resolver gave out for each address, and, while its container runs,
 * the sockets of its namespace. It outlives a container (a sandbox that sleeps and wakes keeps its
 * trail and its policy); the secrets live only here and in the Durable Object's storage, never in the
 * container.
 *
 * A policy change takes effect at once: new connections and requests are judged by it, and open
 * connections that it would now refuse are cut. The connections it holds through the proxy are
 * capped and cut when its container stops (held-connections.ts).
 *
 * Where workerd runs its container, its sidecar hands over workerd's egress listener (useWorkerd):
 * each connection is then offered to the Worker first (workerd-interception.ts), and the container's
 * internet switch governs what the Worker does not take; turning it off cuts what it governs.
 */
import { OPEN_POLICY, type NetworkPolicy } from "../../protocol/network.ts";
import { decide } from "../../protocol/network-policy.ts";
import { AuditLog } from "./audit-log.ts";
import type { EgressFlows, OpenFlow } from "./egress-flows.ts";
import { handleConnection } from "./connection.ts";
import { HeldConnections } from "./held-connections.ts";
import { PROXY_LIMITS } from "./proxy-limits.ts";
import { serveDns } from "./dns-server.ts";
import { neverReached } from "./upstream.ts";
import type { NamespaceSockets } from "./namespace.ts";
import type { NamespaceFirewall, Refusal } from "./namespace-firewall.ts";
import type { TestHostMap } from "./test-hosts.ts";
import type { Certificates } from "./certificates.ts";
import { UpstreamPool } from "./upstream-pool.ts";
import { WorkerdEgress, type WorkerdEgressSettings } from "./workerd-egress.ts";

/** Addresses whose names are remembered, at most (the oldest are forgotten first). */
const MAX_REMEMBERED = 4096;

export class SandboxEgress implements EgressFlows {
  readonly key: string;
  readonly audit = new AuditLog();
  readonly testHosts: TestHostMap | undefined;
  /** Idle connections to the servers this sandbox reached, for its next requests. */
  readonly upstreams = new UpstreamPool();
  /** The connections it holds through the proxy now. */
  readonly connections = new HeldConnections(({ count, ip, port }) => {
    const names = this.namesOf(ip);
    const over = `over the sandbox's ${PROXY_LIMITS.connectionsPerSandbox} connections through the proxy`;
    const reason = count === 1 ? `refused: ${over}` : `refused ${count} more connections ${over} (the last is this one)`;
    this.audit.add({ kind: "tcp", ...(names[0] ? { host: names[0] } : {}), ip, port, bytesOut: 0, bytesIn: 0, decision: "denied", rule: "proxy", reason });
  });
  #policy: NetworkPolicy = OPEN_POLICY;
  #secrets: ReadonlyMap<string, string> = new Map();
  readonly #names = new Map<string, Set<string>>();
  readonly #open = new Set<OpenFlow>();
  #sockets: NamespaceSockets | undefined;
  #firewall: NamespaceFirewall | undefined;
  #certificates: Certificates | undefined;
  /** Whether a container was given the current authority (a new start then makes another). */
  #certificatesTrusted = false;
  #workerd: WorkerdEgress | undefined;
  readonly #makeCertificates: () => Promise<Certificates>;

  constructor(key: string, testHosts: TestHostMap | undefined, makeCertificates: () => Promise<Certificates>) {
    this.key = key;
    this.testHosts = testHosts;
    this.#makeCertificates = makeCertificates;
  }

  get policy(): NetworkPolicy {
    return this.#policy;
  }

  get secrets(): ReadonlyMap<string, string> {
    return this.#secrets;
  }

  get workerd(): WorkerdEgress | undefined {
    return this.#workerd;
  }

  /**
   * What workerd told the sandbox's sidecar (undefined: no sidecar, or one without workerd's
   * listener). Turning the internet off cuts the open connections the Worker did not take.
   */
  useWorkerd(settings: WorkerdEgressSettings | undefined): void {
    const wasOn = this.#workerd?.internetEnabled ?? true;
    this.#workerd = settings ? new WorkerdEgress(settings) : undefined;
    if (!wasOn || this.#workerd?.internetEnabled !== false) return;
    for (const flow of this.#open) if (!flow.worker) flow.cut("the container's internet was turned off");
  }

  /** The certificate authority the sandbox trusts (made once, on first need; its key never leaves this process). */
  async certificates(): Promise<Certificates> {
    return (this.#certificates ??= await this.#makeCertificates());
  }

  /** Resolves once the namespace's firewall refuses what the new policy refuses by address and port. */
  async update(policy: NetworkPolicy, secrets: Record<string, string>): Promise<void> {
    this.#policy = policy;
    this.#secrets = new Map(Object.entries(secrets));
    for (const flow of this.#open) {
      const verdict = decide(policy, flow);
      if (!verdict.allowed) flow.cut(`the policy changed: ${verdict.rule} denies it now`);
    }
    await this.#firewall?.apply(policy);
  }

  /**
   * A container starts: its authority is made anew (the last one's key is dropped with it), unless
   * no container was given the current one yet (the sidecar's `GET /ca` made it for this very start).
   */
  renewCertificates(): void {
    if (this.#certificatesTrusted) this.#certificates = undefined;
    this.#certificatesTrusted = true;
  }

  /**
   * Serves the sandbox's namespace: its redirected connections, its resolver, and its firewall,
   * whose refusals go into the audit trail. Resolves once the policy is in force there.
   */
  async attach(sockets: NamespaceSockets, firewall: NamespaceFirewall): Promise<void> {
    this.detach();
    this.#sockets = sockets;
    this.#firewall = firewall;
    this.upstreams.open();
    sockets.tcp.on("connection", (socket) => void handleConnection(this, socket, sockets));
    sockets.tcp.on("error", () => undefined);
    serveDns(sockets.dns, this);
    await firewall.watch((refusal) => this.#refused(refusal));
    await firewall.named("add", this.testHosts?.syntheticAddresses() ?? []);
    await firewall.apply(this.#policy);
  }

  #refused({ ip, port, rule }: Refusal): void {
    const names = this.namesOf(ip);
    const reason = rule === "never" ? (neverReached(ip) ?? "never reached") : "denied by the policy";
    this.audit.add({ kind: "tcp", ...(names[0] ? { host: names[0] } : {}), ip, port, bytesOut: 0, bytesIn: 0, decision: "denied", rule, reason: `refused at connect: ${reason}` });
  }

  /** The container is gone: its sockets close, and so does every connection still open. */
  detach(): void {
    const sockets = this.#sockets;
    this.#sockets = undefined;
    if (!sockets) return;
    sockets.tcp.close();
    sockets.dns.close();
    this.#firewall?.close();
    this.#firewall = undefined;
    for (const flow of this.#open) flow.cut("the sandbox's container stopped");
    this.connections.closeAll();
    this.upstreams.close();
    this.#names.clear();
  }

  track(flow: OpenFlow): () => void {
    this.#open.add(flow);
    return () => this.#open.delete(flow);
  }

  /**
   * Remembers that our resolver gave out `ips` for `name`; resolves once the firewall lets the
   * sandbox connect to them (to be judged by name), so the answer may go out.
   */
  async rememberNames(ips: readonly string[], name: string): Promise<void> {
    const added: string[] = [];
    const forgotten: string[] = [];
    for (const ip of ips) {
      const names = this.#names.get(ip) ?? new Set<string>();
      if (names.size === 0) added.push(ip);
      this.#names.delete(ip);
      names.add(name);
      this.#names.set(ip, names);
      if (this.#names.size > MAX_REMEMBERED) {
        const oldest = this.#names.keys().next().value!;
        this.#names.delete(oldest);
        forgotten.push(oldest);
      }
    }
    // The test name map's addresses stay in the set whatever is forgotten.
    const stale = forgotten.filter((ip) => !added.includes(ip) && this.testHosts?.nameOf(ip) === undefined);
    await this.#firewall?.named("add", added.filter((ip) => this.#names.has(ip)));
    await this.#firewall?.named("delete", stale);
  }

  /** The names our resolver gave out for `ip` (a test name for its synthetic address). */
  namesOf(ip: string): string[] {
    const mapped = this.testHosts?.nameOf(ip);
    return [...(mapped ? [mapped] : []), ...(this.#names.get(ip) ?? [])];
  }
}
