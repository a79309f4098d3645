/**
 * The runtime's hold on a sandbox namespace's nftables, after the helper set it up: the policy's
 * chain rewritten when the policy changes, addresses added to the set of named ones as our resolver
 * gives them out, and every refusal at the SYN read back for the audit trail.
 *
 * The namespace is held by a file descriptor opened once (a pid could be reused by another process;
 * a descriptor keeps naming the same namespace), and each change is `nft -f` run by nsenter in that
 * namespace alone, one at a time. Refusals are read from `nft monitor`, run there for as long as the
 * namespace is served: a refusing chain sets the packet's trace flag, and the trace names the chain.
 * Each of them dies with the runtime (runtime-bound.ts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readlinkSync } from "node:fs";
import { createInterface } from "node:readline";
import type { NetworkPolicy } from "../../protocol/network.ts";
import { namedChange, policyChain } from "./firewall-rules.ts";
import { FIREWALL } from "./firewall-table.ts";
import { boundToRuntime } from "./runtime-bound.ts";

/** A change nft has not made in this long is taken as failed (nsenter and nft start in milliseconds). */
const CHANGE_TIMEOUT_MS = 10_000;
/** How long a new monitor is given to show it listens before changes go ahead without it. */
const MONITOR_READY_MS = 3_000;
/** Refusing chains' labels kept from earlier generations, for traces that arrive after a change. */
const KEPT_GENERATIONS = 4;

export interface FirewallTools {
  nsenter: string;
  nft: string;
  setpriv: string;
}

/** A connection refused at its SYN: where it was going, and the rule that refused it. */
export interface Refusal {
  ip: string;
  port: number;
  rule: string;
}

const TRACE = new RegExp(`^trace id \\S+ inet ${FIREWALL.table} (r\\d+_\\d+) packet: .* ip daddr (\\S+) .* tcp dport (\\d+)`);

export class NamespaceFirewall {
  readonly #tools: FirewallTools;
  readonly #fds: { net: number; user?: number };
  #queue: Promise<unknown> = Promise.resolve();
  #generation = 0;
  #chains: string[] = [];
  readonly #labels: Map<string, string>[] = [];
  #monitor: ChildProcess | undefined;
  #closed = false;

  constructor(tools: FirewallTools, pid: number, viaUserNamespace: boolean) {
    this.#tools = tools;
    const net = openSync(`/proc/${pid}/ns/net`, "r");
    if (readlinkSync(`/proc/self/fd/${net}`) === readlinkSync("/proc/self/ns/net")) {
      closeSync(net);
      throw new Error(`process ${pid} shares the runtime's network namespace: it is not a container's`);
    }
    this.#fds = viaUserNamespace ? { net, user: openSync(`/proc/${pid}/ns/user`, "r") } : { net };
  }

  /** Starts reading refusals; resolves once the monitor listens (or after a while, without it). */
  async watch(onRefusal: (refusal: Refusal) => void): Promise<void> {
    const monitor = this.#enter([this.#tools.nft, "monitor"], "ignore");
    this.#monitor = monitor;
    monitor.on("error", () => undefined);
    monitor.stderr!.resume();
    let heard: () => void = () => undefined;
    const listening = new Promise<void>((resolve) => (heard = resolve));
    createInterface({ input: monitor.stdout! }).on("line", (line) => {
      heard();
      const trace = TRACE.exec(line);
      if (!trace) return;
      const rule = this.#labels.find((labels) => labels.has(trace[1]!))?.get(trace[1]!);
      if (rule !== undefined) onRefusal({ ip: trace[2]!, port: Number(trace[3]), rule });
    });
    // The monitor prints the changes it sees: a change made now shows when it listens.
    const timer = setTimeout(heard, MONITOR_READY_MS);
    while (!this.#closed && (await Promise.race([listening.then(() => true), delay(100).then(() => false)])) === false) {
      await this.#change(namedChange("add", ["0.0.0.0"]) + namedChange("delete", ["0.0.0.0"]));
    }
    clearTimeout(timer);
  }

  /** Puts `policy`'s refusals in force (in one transaction, replacing the last). */
  apply(policy: NetworkPolicy): Promise<void> {
    return this.#serial(async () => {
      const generation = this.#generation + 1;
      const chain = policyChain(policy, generation, this.#chains);
      await this.#run(chain.text);
      this.#generation = generation;
      this.#chains = [...chain.labels.keys()];
      this.#labels.unshift(chain.labels);
      this.#labels.length = Math.min(this.#labels.length, KEPT_GENERATIONS);
    });
  }

  /** Adds addresses to (or removes them from) the set the proxy judges by name. */
  named(verb: "add" | "delete", addresses: readonly string[]): Promise<void> {
    if (addresses.length === 0) return Promise.resolve();
    return this.#change(namedChange(verb, addresses));
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#monitor?.kill("SIGKILL");
    closeSync(this.#fds.net);
    if (this.#fds.user !== undefined) closeSync(this.#fds.user);
  }

  #change(text: string): Promise<void> {
    return this.#serial(() => this.#run(text));
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Runs nft with `text` as its input in the namespace. */
  #run(text: string): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the sandbox's namespace is no longer served"));
    const child = this.#enter([this.#tools.nft, "-f", "-"], "pipe");
    let said = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      if (said.length < 2000) said += chunk.toString();
    });
    child.stdin!.on("error", () => undefined);
    child.stdin!.end(text);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => child.kill("SIGKILL"), CHANGE_TIMEOUT_MS);
      child.once("error", (error) => reject(new Error(`nsenter failed to start (${error.message})`)));
      child.once("close", (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new Error(`the namespace's firewall was not changed (${signal ?? `exit ${code}`}): ${said.trim().split("\n")[0] ?? ""}`));
      });
    });
  }

  /** A command in the namespace: its descriptors are the child's 3 (network) and 4 (user). */
  #enter(command: string[], stdin: "pipe" | "ignore"): ChildProcess {
    const user = this.#fds.user === undefined ? [] : ["--user=/proc/self/fd/4", "--preserve-credentials"];
    return spawn(this.#tools.nsenter, [...user, "--net=/proc/self/fd/3", "--", ...boundToRuntime(this.#tools.setpriv, command)], {
      stdio: [stdin, stdin === "pipe" ? "ignore" : "pipe", "pipe", this.#fds.net, ...(this.#fds.user === undefined ? [] : [this.#fds.user])],
      env: { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin" },
    });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
