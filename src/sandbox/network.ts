/**
 * A sandbox's egress as its Durable Object keeps it: the network policy and the secrets its
 * injection rules name, in Durable Object storage (so they outlive the container and the Durable
 * Object's eviction). Secrets are write-only: their values leave this file only for the proxy that
 * injects them (the local runtime's, or on Cloudflare the Worker's outbound handler, one request at a time), never in
 * an answer, an error or a log.
 */
import { networkPolicySchema, OPEN_POLICY, secretsNamed, type NetworkPolicy, type NetworkPolicyInput, type SecretInfo } from "../../protocol/network.ts";
import type { RuntimeEgress } from "../../protocol/runtime.ts";
import { parseRequest } from "./request.ts";

const POLICY_KEY = "network:policy";
const SECRETS_KEY = "network:secrets";

interface StoredSecret {
  value: string;
  updatedAt: string;
}

export class NetworkSettings {
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  async policy(): Promise<NetworkPolicy> {
    return (await this.#storage.get<NetworkPolicy>(POLICY_KEY)) ?? OPEN_POLICY;
  }

  /** Checks and keeps a new policy; the caller puts it in force. */
  async setPolicy(input: NetworkPolicyInput): Promise<NetworkPolicy> {
    const policy = parseRequest(networkPolicySchema, input, "network policy");
    await this.#storage.put(POLICY_KEY, policy);
    return policy;
  }

  async #secrets(): Promise<Record<string, StoredSecret>> {
    return (await this.#storage.get<Record<string, StoredSecret>>(SECRETS_KEY)) ?? {};
  }

  async setSecret(name: string, value: string): Promise<SecretInfo> {
    const secrets = await this.#secrets();
    const updatedAt = new Date().toISOString();
    secrets[name] = { value, updatedAt };
    await this.#storage.put(SECRETS_KEY, secrets);
    return { name, updatedAt };
  }

  /** False when there was no such secret. */
  async deleteSecret(name: string): Promise<boolean> {
    const secrets = await this.#secrets();
    if (!(name in secrets)) return false;
    delete secrets[name];
    await this.#storage.put(SECRETS_KEY, secrets);
    return true;
  }

  async listSecrets(): Promise<SecretInfo[]> {
    return Object.entries(await this.#secrets())
      .map(([name, { updatedAt }]) => ({ name, updatedAt }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Names the policy uses that have no value: their headers are not sent. */
  async missingSecrets(policy: NetworkPolicy): Promise<string[]> {
    const secrets = await this.#secrets();
    return secretsNamed(policy).filter((name) => !(name in secrets));
  }

  /** What the proxy needs: the policy, and the values of the secrets it names (no others). */
  async runtimeEgress(): Promise<RuntimeEgress> {
    const policy = await this.policy();
    const secrets = await this.#secrets();
    const named = Object.fromEntries(secretsNamed(policy).flatMap((name) => (secrets[name] ? [[name, secrets[name].value]] : [])));
    return { policy, secrets: named };
  }
}

