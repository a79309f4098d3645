/**
 * Every sandbox's egress in one runtime, by sandbox key, and what they share: the tools the
 * namespace setup needs, and the test name map where one is on. A sandbox's
 * entry is made when its Durable Object first gives a policy (or its container first starts), and
 * kept while the runtime runs.
 */
import type { NetworkPolicy } from "../../protocol/network.ts";
import { makeCertificates } from "./certificates.ts";
import { openNamespace, type NamespaceTools } from "./namespace.ts";
import { NamespaceFirewall } from "./namespace-firewall.ts";
import { SandboxEgress } from "./sandbox-egress.ts";
import type { TestHostMap } from "./test-hosts.ts";

export interface EgressTools extends NamespaceTools {
  nft: string;
}

export class EgressRegistry {
  readonly #sandboxes = new Map<string, SandboxEgress>();
  readonly #tools: EgressTools | { missing: string };
  readonly testHosts: TestHostMap | undefined;

  constructor(tools: EgressTools | { missing: string }, testHosts?: TestHostMap) {
    this.#tools = tools;
    this.testHosts = testHosts;
  }

  /** Why sandboxes cannot have a network here, if they cannot. */
  get unavailable(): string | undefined {
    return "missing" in this.#tools ? this.#tools.missing : undefined;
  }

  of(key: string): SandboxEgress {
    let egress = this.#sandboxes.get(key);
    if (!egress) {
      const tools = this.#tools;
      egress = new SandboxEgress(key, this.testHosts, () => {
        if ("missing" in tools) throw new Error(tools.missing);
        return makeCertificates(key);
      });
      this.#sandboxes.set(key, egress);
    }
    return egress;
  }

  /** Resolves once the policy is in force, in the sandbox's namespace too when its container runs. */
  update(key: string, policy: NetworkPolicy, secrets: Record<string, string>): Promise<void> {
    return this.of(key).update(policy, secrets);
  }

  /** Sets up the namespace of the container whose process `pid` is inside, for sandbox `key`; returns how to end it. */
  async attach(key: string, pid: number): Promise<{ caPem: string; close(): void }> {
    const tools = this.#tools;
    if ("missing" in tools) throw new Error(tools.missing);
    const egress = this.of(key);
    egress.renewCertificates();
    const [sockets, certificates] = await Promise.all([openNamespace(tools, pid), egress.certificates()]);
    let firewall: NamespaceFirewall;
    try {
      firewall = new NamespaceFirewall(tools, pid, process.getuid?.() !== 0);
    } catch (error) {
      sockets.tcp.close();
      sockets.dns.close();
      throw error;
    }
    try {
      await egress.attach(sockets, firewall);
    } catch (error) {
      egress.detach();
      throw error;
    }
    return { caPem: certificates.caPem, close: () => egress.detach() };
  }
}
