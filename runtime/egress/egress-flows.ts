/**
 * What the proxy's connection handlers (connection.ts, http-exchange.ts, judge-request.ts,
 * upgrade-forward.ts, dns-server.ts) see of the sandbox a connection belongs to: its policy and
 * secrets, its audit trail, the names the resolver gave out, its certificates and upstream pool, and
 * the open flows a policy change judges again, and workerd's egress listener where workerd runs its
 * container. SandboxEgress (sandbox-egress.ts) is it; declared
 * apart so that the handlers and the sandbox that starts them do not import each other.
 */
import type { NetworkPolicy } from "../../protocol/network.ts";
import type { AuditLog } from "./audit-log.ts";
import type { Certificates } from "./certificates.ts";
import type { HeldConnections } from "./held-connections.ts";
import type { TestHostMap } from "./test-hosts.ts";
import type { UpstreamPool } from "./upstream-pool.ts";
import type { WorkerdEgress } from "./workerd-egress.ts";

/** An open connection, judged again when the policy changes. */
export interface OpenFlow {
  names: readonly string[];
  ip?: string;
  port: number;
  /** The Worker's outbound handler took it (workerd-interception.ts): the container's internet switch does not govern it. */
  worker?: boolean;
  cut(reason: string): void;
}

export interface EgressFlows {
  readonly audit: AuditLog;
  readonly testHosts: TestHostMap | undefined;
  readonly upstreams: UpstreamPool;
  /** The connections the sandbox holds through the proxy now, within its cap. */
  readonly connections: HeldConnections;
  readonly policy: NetworkPolicy;
  readonly secrets: ReadonlyMap<string, string>;
  /** workerd's egress listener, when workerd runs the sandbox's container: each connection is offered to the Worker first. */
  readonly workerd: WorkerdEgress | undefined;
  certificates(): Promise<Certificates>;
  /** Keeps a flow open until the returned function is called; a policy change cuts it if it now refuses it. */
  track(flow: OpenFlow): () => void;
  /** The name the sandbox's resolver answered with for these addresses. */
  rememberNames(ips: readonly string[], name: string): Promise<void>;
  namesOf(ip: string): string[];
}
