/**
 * EdgeSandboxSession: the AI SDK's network sandbox session (`HarnessV1NetworkSandboxSession`, which
 * is an `Experimental_SandboxSession`) on one sandbox of this service. Files and commands are the
 * sandbox's (files.ts, process.ts), relative paths resolving against its workspace, the default
 * working directory; ports are its preview ports (ports.ts); the network setting and lifecycle are
 * its config and container. `restricted()` hands tools a separate object with files and commands
 * only, so they cannot stop the sandbox, open ports or change its network.
 */
import type { HarnessV1NetworkPolicy, HarnessV1NetworkSandboxSession, HarnessV1PortEndpoint, HarnessV1RequestTransformation } from "@ai-sdk/harness";
import type { Experimental_SandboxSession as SandboxSession } from "ai";
import type { SandboxClient } from "../../client/index.ts";
import { asHarness } from "./errors.ts";
import * as files from "./files.ts";
import { applyNetworkPolicy, applyRequestTransformations } from "./network-policy.ts";
import { portEndpoint, replacePorts, type PortProtocol } from "./ports.ts";
import * as commands from "./process.ts";
import { portsMarkerValue, SESSION_MARKER, SESSION_PORTS_MARKER } from "./session-marker.ts";

export interface EdgeSandboxSessionInit {
  client: SandboxClient;
  /** Absolute path of the sandbox's workspace. */
  workspace: string;
  ports: readonly number[];
  /** The service origin port URLs are built on. */
  origin: string | undefined;
  /** Whether the sandbox saves its workspace when it stops (it has `persistence`). */
  durable: boolean;
}

export class EdgeSandboxSession implements HarnessV1NetworkSandboxSession, SandboxSession {
  readonly id: string;
  readonly defaultWorkingDirectory: string;
  /** The sandbox's client, for what the contract does not cover (code contexts, terminals, backups). */
  readonly client: SandboxClient;
  #ports: readonly number[];
  readonly #origin: string | undefined;
  readonly #durable: boolean;

  constructor(init: EdgeSandboxSessionInit) {
    this.client = init.client;
    this.id = init.client.id;
    this.defaultWorkingDirectory = init.workspace;
    this.#ports = [...init.ports];
    this.#origin = init.origin;
    this.#durable = init.durable;
  }

  get ports(): readonly number[] {
    return this.#ports;
  }

  get description(): string {
    const ports = this.#ports.length === 0 ? "none" : this.#ports.join(", ");
    return [
      `A Linux sandbox (${this.id}) with bash, coreutils, git, Node.js and Python 3.`,
      `Working directory: ${this.defaultWorkingDirectory} (relative paths start here; files outside it may be refused).`,
      `Exposed ports: ${ports}; a server must listen on one of them to be reached from outside.`,
    ].join("\n");
  }

  readonly readFile = (options: { path: string }) => files.readFile(this.client, options.path);
  readonly readBinaryFile = (options: { path: string }) => files.readBinaryFile(this.client, options.path);
  readonly readTextFile = (options: { path: string; encoding?: string; startLine?: number; endLine?: number }) => files.readTextFile(this.client, options);
  readonly writeFile = (options: { path: string; content: ReadableStream<Uint8Array> }) => files.writeFile(this.client, options.path, options.content);
  readonly writeBinaryFile = (options: { path: string; content: Uint8Array }) => files.writeBinaryFile(this.client, options.path, options.content);
  readonly writeTextFile = (options: { path: string; content: string; encoding?: string }) => files.writeTextFile(this.client, options);
  readonly stat = (options: { path: string }) => files.stat(this.client, options.path);
  readonly listDirectory = (options: { path: string }) => files.listDirectory(this.client, options.path);
  readonly deleteFile = (options: { path: string }) => files.deleteFile(this.client, options.path);
  readonly run = (options: commands.CommandOptions) => commands.run(this.client, options);
  readonly spawn = ((options: commands.CommandOptions & { stdin?: boolean }) => commands.spawn(this.client, options)) as SandboxSession["spawn"];

  readonly getPortEndpoint = (options: { port: number; protocol?: PortProtocol }): Promise<HarnessV1PortEndpoint> => portEndpoint(this.client, options.port, options.protocol, this.#origin, this.#ports);

  /** @deprecated in the contract: getPortEndpoint's URL. */
  readonly getPortUrl = async (options: { port: number; protocol?: PortProtocol }): Promise<string> => (await this.getPortEndpoint(options)).url;

  /** Replaces the exposed ports (full replacement: the others are unexposed). */
  readonly setPorts = async (ports: ReadonlyArray<number>): Promise<void> => {
    await replacePorts(this.client, ports, this.#origin);
    await asHarness(() => this.client.setEnvVars({ [SESSION_PORTS_MARKER]: portsMarkerValue(ports) }));
    this.#ports = [...ports];
  };

  readonly setNetworkPolicy = async (policy: HarnessV1NetworkPolicy): Promise<void> => {
    await applyNetworkPolicy(this.client, policy);
  };

  /** Headers our proxy sets on the way out, from secrets the sandbox never sees (host matches only). */
  readonly setRequestTransformations = async (transformations: ReadonlyArray<HarnessV1RequestTransformation>): Promise<void> => {
    await applyRequestTransformations(this.client, transformations, false);
  };

  readonly addRequestTransformations = async (transformations: ReadonlyArray<HarnessV1RequestTransformation>): Promise<void> => {
    await applyRequestTransformations(this.client, transformations, true);
  };

  /** Stops the container (its processes end); the sandbox stays resumable, its workspace saved first when it is durable. */
  readonly stop = async (): Promise<void> => {
    await asHarness(() => this.client.destroy(this.#durable ? { keep: true } : {}));
  };

  /** Stops the container and forgets the session: its saved workspace is discarded and it can no longer be resumed. */
  readonly destroy = async (): Promise<void> => {
    await asHarness(async () => {
      await this.client.setEnvVars({ [SESSION_MARKER]: undefined, [SESSION_PORTS_MARKER]: undefined });
      await this.client.destroy();
    });
  };

  readonly restricted = (): SandboxSession => ({
    description: this.description,
    readFile: this.readFile,
    readBinaryFile: this.readBinaryFile,
    readTextFile: this.readTextFile,
    writeFile: this.writeFile,
    writeBinaryFile: this.writeBinaryFile,
    writeTextFile: this.writeTextFile,
    stat: this.stat,
    listDirectory: this.listDirectory,
    deleteFile: this.deleteFile,
    spawn: this.spawn,
    run: this.run,
  });
}
