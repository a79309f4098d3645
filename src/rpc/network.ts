/**
 * A sandbox's egress as it crosses Workers RPC and /v1: the network policy, write-only secrets and
 * the audit trail (shapes decided in protocol/network.ts).
 */
import type { z } from "zod";
import type { deleteSecretResultSchema } from "../../protocol/network.ts";

export type { AuditEntry, AuditEvent, AuditPage, AuditQuery, AuditResume, NetworkPolicy, NetworkPolicyInput, NetworkPolicyState, SecretInfo } from "../../protocol/network.ts";
export type DeleteSecretResult = z.output<typeof deleteSecretResultSchema>;
