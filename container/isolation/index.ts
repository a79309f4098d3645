/**
 * Native isolation of commands (the local runtime's stand-in for a container's walls). Created once
 * at server start from IsolationOptions: asking for bwrap where it does not work throws
 * ISOLATION_UNAVAILABLE right there, never a silent downgrade. Under bwrap it contributes a spawn hook
 * that wraps every command's argv; with "none" it only reports what is in effect. Under bwrap,
 * commands share a network of the sandbox's own (never the host's, whose loopback serves other
 * things): loopback only, or connected outward when network is allowed; without the programs that
 * provide it, that too is ISOLATION_UNAVAILABLE. It also gives the server its way to the sandbox's
 * ports (`ports`): the server's own loopback without isolation, a forwarder inside that network under bwrap.
 *
 * It also owns the server's private state directory: the sandbox's /tmp and HOME under bwrap, and the
 * per-run files sessions use to carry state out of a command (visible to commands at RUNS_PATH).
 */
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { ISOLATION_ENV, type IsolationInEffect, type IsolationOptions, type IsolationSupport } from "../../protocol/isolation.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { HOOK_ORDER, type SpawnHook } from "../engine/hooks.ts";
import { isInside } from "../files/paths.ts";
import { bwrapBaseArgs, bwrapCommand, SYSTEM_PATHS, type BwrapLayout } from "./bwrap.ts";
import { findNetworkPrograms, findNsenter, SandboxNetwork } from "./network.ts";
import { directConnector, ForwarderConnector, type PortConnector } from "../ports/port-connector.ts";
import { createStateDir } from "./state-dir.ts";

/** The walls a launcher says it put around this server (ISOLATION_ENV.containerWalls), if any. */
export function containerWallsFromEnv(env: Record<string, string | undefined>): IsolationInEffect | undefined {
  const text = env[ISOLATION_ENV.containerWalls];
  if (!text) return undefined;
  try {
    return JSON.parse(text) as IsolationInEffect;
  } catch {
    throw new ServiceError("INVALID_REQUEST", `${ISOLATION_ENV.containerWalls} must be JSON`);
  }
}

/** Where commands under bwrap find the per-run state directory. */
const RUNS_PATH = "/.sandbox-state";

export interface IsolationSetup {
  workspace: string;
  /** The server's private directory; a temporary one (removed on close) when absent. */
  stateDir?: string;
  /** HOME as commands see it. */
  home?: string;
  /** The walls of the container this server runs in, as its launcher describes them (reported as they are). */
  walls?: IsolationInEffect;
}

export class CommandIsolation {
  readonly options: IsolationOptions;
  /** What this machine offers, probed when first asked (only a server under bwrap asks). */
  #support: IsolationSupport | undefined;
  /** Per-run state files: where the server reads them and where commands write them. */
  readonly runsDir: { host: string; visible: string };
  readonly #layout: BwrapLayout | undefined;
  readonly #baseArgs: string[];
  readonly #stateDir: string;
  readonly #ownsStateDir: boolean;
  readonly #network: SandboxNetwork | undefined;
  readonly #walls: IsolationInEffect | undefined;
  /** How the server reaches a port of the sandbox (preview ports). */
  readonly ports: PortConnector;

  constructor(options: IsolationOptions, setup: IsolationSetup, support?: IsolationSupport) {
    this.options = options;
    this.#support = support;
    if (options.isolation === "bwrap" && !this.support.bwrap.available) {
      throw new ServiceError("ISOLATION_UNAVAILABLE", `isolation "bwrap" was asked for but is not available: ${this.support.bwrap.reason}`, {
        isolation: "bwrap",
        reason: this.support.bwrap.reason,
      });
    }
    const networkPrograms = options.isolation === "bwrap" && options.allowNetwork ? findNetworkPrograms() : undefined;
    if (networkPrograms && "missing" in networkPrograms) {
      throw new ServiceError("ISOLATION_UNAVAILABLE", `isolation "bwrap" with network allowed needs a network of its own: ${networkPrograms.missing}`, {
        isolation: "bwrap",
        reason: networkPrograms.missing,
      });
    }
    const nsenter = options.isolation === "bwrap" && !options.allowNetwork ? findNsenter() : undefined;
    if (typeof nsenter === "object") {
      throw new ServiceError("ISOLATION_UNAVAILABLE", `isolation "bwrap" needs a network namespace its commands share: ${nsenter.missing}`, {
        isolation: "bwrap",
        reason: nsenter.missing,
      });
    }
    for (const p of [...options.readOnlyPaths, ...options.readWritePaths]) {
      if (!existsSync(p)) throw new ServiceError("INVALID_REQUEST", `isolation config: configured path does not exist: ${p}`, { path: p });
    }
    this.#walls = setup.walls;
    this.#ownsStateDir = setup.stateDir === undefined;
    this.#stateDir = setup.stateDir ?? createStateDir();
    const runs = path.join(this.#stateDir, "runs");
    mkdirSync(runs, { recursive: true, mode: 0o700 });

    if (options.isolation !== "bwrap") {
      this.#network = undefined;
      this.#layout = undefined;
      this.#baseArgs = [];
      this.runsDir = { host: runs, visible: runs };
      this.ports = directConnector();
      return;
    }
    const tmpSource = path.join(this.#stateDir, "tmp");
    mkdirSync(tmpSource, { recursive: true, mode: 0o1777 });
    const layout: BwrapLayout = { binary: this.support.bwrap.path ?? "bwrap", options, workspace: setup.workspace, tmpSource };
    const home = setup.home;
    if (home && home !== "/" && path.isAbsolute(home) && !this.#isBoundAsIs(home, setup.workspace)) {
      layout.home = { path: home, source: path.join(this.#stateDir, "home") };
      mkdirSync(layout.home.source, { recursive: true, mode: 0o700 });
    }
    this.#layout = layout;
    const network = new SandboxNetwork(networkPrograms ?? { bwrap: layout.binary, nsenter: nsenter! });
    this.#network = network;
    this.ports = new ForwarderConnector(() => network.commandPrefix(), path.join(this.#stateDir, "ports.sock"));
    this.#baseArgs = bwrapBaseArgs(layout, ["--bind", runs, RUNS_PATH]);
    this.runsDir = { host: runs, visible: RUNS_PATH };
  }

  /**
   * Probing bubblewrap spawns it twice: a server without it (a container's, which has its walls
   * already) never does, and one under bwrap does it once, when it is made.
   */
  get support(): IsolationSupport {
    return (this.#support ??= detectIsolation());
  }

  info(): IsolationInEffect {
    if (this.#walls) return this.#walls;
    const bwrap = this.options.isolation === "bwrap";
    return {
      mode: this.options.isolation,
      allowNetwork: bwrap ? this.options.allowNetwork : true,
      readOnlyPaths: this.options.readOnlyPaths,
      readWritePaths: this.options.readWritePaths,
      allowSystemBinaries: bwrap ? this.options.allowSystemBinaries : true,
      pidNamespace: bwrap,
      ...(bwrap && this.support.bwrap.version ? { version: this.support.bwrap.version } : {}),
    };
  }

  /** The hook wrapping argv in bwrap (undefined without isolation). Runs after the session hook. */
  spawnHook(): SpawnHook | undefined {
    const layout = this.#layout;
    if (!layout) return undefined;
    const network = this.#network;
    return {
      name: "isolation",
      order: HOOK_ORDER.isolation,
      prepare: async (plan, request) => {
        let wrapped = bwrapCommand(layout, this.#baseArgs, { file: plan.file, args: plan.args, cwd: plan.cwd }, this.#programMounts(request.programPaths));
        if (network) {
          const [file, ...prefix] = await network.commandPrefix();
          wrapped = { file: file!, args: [...prefix, wrapped.file, ...wrapped.args] };
        }
        // bwrap itself starts on the host: from the cwd's host side when it exists there (e.g. /tmp/x
        // lives in the sandbox's own /tmp), else as asked, so a missing cwd is still reported as such.
        const hostCwd = this.hostPathOf(plan.cwd);
        const cwd = isDirectory(plan.cwd) || !isDirectory(hostCwd) ? plan.cwd : hostCwd;
        return { ...plan, ...wrapped, cwd };
      },
    };
  }

  /** Where a path as commands see it lies on the host (differs for the sandbox's /tmp and HOME under bwrap). */
  hostPathOf(sandboxPath: string): string {
    const layout = this.#layout;
    if (!layout || this.#isBoundAsIs(sandboxPath, layout.workspace)) return sandboxPath;
    if (layout.home && isInside(sandboxPath, layout.home.path)) {
      return path.join(layout.home.source, path.relative(layout.home.path, sandboxPath));
    }
    if (isInside(sandboxPath, "/tmp")) return path.join(layout.tmpSource, path.relative("/tmp", sandboxPath));
    return sandboxPath;
  }

  /** Whether commands see a host path at the same place (the system directories, the workspace, configured paths). */
  isVisible(hostPath: string): boolean {
    const layout = this.#layout;
    if (!layout) return true;
    if (this.#isBoundAsIs(hostPath, layout.workspace)) return true;
    return this.options.allowSystemBinaries && SYSTEM_PATHS.some((dir) => isInside(hostPath, dir));
  }

  /**
   * Read-only binds for the files a program needs that commands do not otherwise see (e.g. the Node
   * binary of the server, outside the system directories). Only where system binaries are visible:
   * such a program needs the system's libraries, and hiding those is the operator's choice.
   */
  #programMounts(paths: readonly string[] | undefined): string[] {
    if (!paths || !this.options.allowSystemBinaries) return [];
    return paths.filter((p) => !this.isVisible(p) && existsSync(p)).flatMap((p) => ["--ro-bind", p, p]);
  }

  /** Stops the sandbox's network and removes the state directory when this server created it. */
  close(): void {
    this.ports.close();
    this.#network?.close();
    if (this.#ownsStateDir) rmSync(this.#stateDir, { recursive: true, force: true });
  }

  #isBoundAsIs(p: string, workspace: string): boolean {
    return [workspace, ...this.options.readWritePaths, ...this.options.readOnlyPaths].some((root) => isInside(p, root));
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
