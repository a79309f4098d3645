/**
 * The Docker engine's state: the containers workerd asked for, by name, each either an app (one
 * sandbox's container of the runtime's pool) or an app's egress sidecar (sidecar.ts). What Docker
 * keeps of a container and workerd reads back (its id, state, exit status, published port) is kept
 * here; the container itself is the pool's, so warm containers, limits and the host uid are the
 * runtime's as for any sandbox.
 *
 * The app's image is the runtime's (its container server on the image's root file system): the
 * `Image` asked for is recorded and answered back, not looked up. Its `Cmd` (the entrypoint a start
 * asks for) is recorded too; the runtime runs its container server whatever it says.
 *
 * The container server answers only to a secret, which its caller chooses: the reserved env var
 * ENGINE_SERVER_SECRET_VAR of the create, taken out of the container's environment. A create without
 * it is refused: its server could serve nobody. What its sandbox asks beyond that (its isolation, its
 * network policy, the sandbox key it is known by) comes the same way, in ENGINE_START_VAR, checked
 * against the operator's walls at create; without it the runtime's defaults apply and the key comes
 * from the container's name.
 */
import { randomBytes } from "node:crypto";
import { ENGINE_SERVER_SECRET_VAR, ENGINE_START_VAR, engineStartSettingsSchema, type EngineStartSettings, type RuntimeStartRequest, type StartRefusal } from "../../protocol/runtime.ts";
import { ERROR_CODES } from "../../protocol/errors.ts";
import { isServiceError } from "../../server-kit/service-error.ts";
import { checkIsolationRequest, type OperatorPolicy } from "../policy.ts";
import { startRefusalOf } from "../start-failure.ts";
import type { ContainerProcess } from "../container-process.ts";
import type { ContainerPool } from "../pool.ts";
import { appNameOf, exitStatus, isSidecarName, sandboxKeyOf } from "./names.ts";
import { Sidecar } from "./sidecar.ts";

/**
 * A start the runtime refused with a reason of its own (the operator's walls, its limit of sandboxes,
 * a container server that refused its isolation), with its code.
 */
function refusalOf(error: unknown): StartRefusal | undefined {
  if (isServiceError(error)) return { code: error.code, message: error.message };
  const logTail = (error as { logTail?: string }).logTail;
  return logTail ? startRefusalOf(logTail) : undefined;
}

/** Such a refusal as a Docker error whose message opens with the code in brackets (workerd passes a create's message on). */
function refusalError(refusal: StartRefusal): EngineError {
  return new EngineError(ERROR_CODES[refusal.code], `[${refusal.code}] ${refusal.message}`);
}

/** A refusal with Docker's status for it (404 no such container, 409 conflict, 400 bad parameter). */
export class EngineError extends Error {
  override name = "EngineError";
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export type ContainerStatus = "created" | "running" | "exited" | "removing";

export interface CreateRequest {
  image: string;
  cmd: string[];
  env: string[];
}

export interface EngineContainer {
  readonly id: string;
  readonly name: string;
  readonly image: string;
  readonly cmd: string[];
  readonly created: string;
  /** The sandbox key its run has in the pool (apps only). */
  readonly key: string;
  readonly sidecar: boolean;
  readonly env: Record<string, string>;
  readonly secret: string | undefined;
  /** Its sandbox's isolation and network policy, as the create asked (ENGINE_START_VAR). */
  readonly settings: EngineStartSettings;
  status: ContainerStatus;
  /** Settles once a start under way has (or has not) brought its server up. */
  starting: Promise<unknown> | undefined;
  run: ContainerProcess | undefined;
  proxy: Sidecar | undefined;
  exitCode: number;
  startedAt: string | undefined;
  finishedAt: string | undefined;
  /** Settles when it is removed. */
  readonly removed: Promise<void>;
  markRemoved(): void;
  /** Settles when its sidecar stops (a sidecar has no process whose exit says so). */
  sidecarStopped: Promise<void> | undefined;
  markSidecarStopped: (() => void) | undefined;
}

export class DockerEngine {
  readonly #pool: ContainerPool;
  readonly #policy: OperatorPolicy;
  readonly #byName = new Map<string, EngineContainer>();
  /** Why each sandbox's last start was refused (the runtime's API answers it: workerd gives its Durable Object no reason). */
  readonly #refusals: Map<string, StartRefusal>;

  constructor(pool: ContainerPool, policy: OperatorPolicy, refusals: Map<string, StartRefusal>) {
    this.#pool = pool;
    this.#policy = policy;
    this.#refusals = refusals;
  }

  /** A container by name or id, or 404. */
  get(ref: string): EngineContainer {
    const found = this.#byName.get(ref) ?? [...this.#byName.values()].find((container) => container.id === ref || container.id.startsWith(ref));
    if (!found) throw new EngineError(404, `No such container: ${ref}`);
    return found;
  }

  find(ref: string): EngineContainer | undefined {
    try {
      return this.get(ref);
    } catch {
      return undefined;
    }
  }

  list(): EngineContainer[] {
    return [...this.#byName.values()];
  }

  create(name: string, request: CreateRequest): EngineContainer {
    if (!/^\/?[a-zA-Z0-9][a-zA-Z0-9_.%-]*$/.test(name)) throw new EngineError(400, `Invalid container name (${name}): only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
    name = name.replace(/^\//, "");
    if (this.#byName.has(name)) throw new EngineError(409, `Conflict. The container name "/${name}" is already in use`);
    const sidecar = isSidecarName(name);
    const env: Record<string, string> = {};
    for (const entry of request.env) {
      const at = entry.indexOf("=");
      if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
    }
    const secret = env[ENGINE_SERVER_SECRET_VAR];
    delete env[ENGINE_SERVER_SECRET_VAR];
    if (!sidecar && !secret) throw new EngineError(400, `the container's environment must carry ${ENGINE_SERVER_SECRET_VAR}: the secret its server answers to`);
    const named = sandboxKeyOf(sidecar ? appNameOf(name) : name);
    const settings = this.#settingsOf(env[ENGINE_START_VAR], named);
    delete env[ENGINE_START_VAR];
    const key = settings.key ?? named;
    // One sandbox, one container: a key another container holds would share its folder and its pool slot.
    const holder = sidecar ? undefined : this.list().find((other) => !other.sidecar && other.key === key && other.status === "running");
    if (holder) throw new EngineError(409, `Conflict. The sandbox key "${key}" is in use by the container "/${holder.name}"`);
    let markRemoved = () => {};
    const removed = new Promise<void>((resolve) => (markRemoved = resolve));
    const container: EngineContainer = {
      id: randomBytes(32).toString("hex"),
      name,
      image: request.image,
      cmd: request.cmd,
      created: new Date().toISOString(),
      key,
      sidecar,
      env,
      secret,
      settings,
      status: "created",
      starting: undefined,
      run: undefined,
      proxy: undefined,
      exitCode: 0,
      startedAt: undefined,
      finishedAt: undefined,
      removed,
      markRemoved,
      sidecarStopped: undefined,
      markSidecarStopped: undefined,
    };
    this.#byName.set(name, container);
    return container;
  }

  /** ENGINE_START_VAR's settings, checked against the operator's walls; 400 or 403 with the reason (kept for the sandbox's key, else `named`). */
  #settingsOf(text: string | undefined, named: string): EngineStartSettings {
    if (text === undefined) return {};
    let parsed;
    try {
      parsed = engineStartSettingsSchema.safeParse(JSON.parse(text));
    } catch {
      throw new EngineError(400, `${ENGINE_START_VAR} is not JSON`);
    }
    if (!parsed.success) throw new EngineError(400, `${ENGINE_START_VAR} is {key?, isolation?, egress?}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    try {
      checkIsolationRequest(this.#policy, parsed.data.isolation ?? {});
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      this.#refusals.set(parsed.data.key ?? named, refusal);
      throw refusalError(refusal);
    }
    return parsed.data;
  }

  /** Starts it; false when it ran already (Docker's 304). */
  async start(container: EngineContainer): Promise<boolean> {
    if (container.status === "running") return false;
    if (container.status === "removing") throw new EngineError(409, `container ${container.name} is being removed`);
    if (container.sidecar) {
      container.proxy = await Sidecar.start({
        serverPort: async () => {
          const app = this.#byName.get(appNameOf(container.name));
          // A tunnel asked for while its container starts waits for its server, as one asked for a moment later would find it.
          await app?.starting?.catch(() => undefined);
          return app?.status === "running" ? app.run?.port : undefined;
        },
        serverSecret: () => this.#byName.get(appNameOf(container.name))?.secret,
        // The app's key, which its create may choose (ENGINE_START_VAR) after the sidecar was made.
        caPem: async () => (await this.#pool.containerSettings.egress.of(this.#appKey(container)).certificates()).caPem,
        egressChanged: (settings) => this.#pool.containerSettings.egress.of(this.#appKey(container)).useWorkerd(settings),
      });
      container.sidecarStopped = new Promise<void>((resolve) => (container.markSidecarStopped = resolve));
      this.#running(container);
      return true;
    }
    const proxy = this.#byName.get(`${container.name}-proxy`)?.proxy;
    const request: RuntimeStartRequest = {
      env: container.env,
      ...(container.cmd.length > 0 ? { entrypoint: container.cmd } : {}),
      // With workerd's egress listener known, the container gets its network whatever its internet
      // switch says (the Worker's interceptions need it): the egress proxy holds that switch then.
      enableInternet: proxy?.workerdEgress !== undefined || (proxy?.internetEnabled ?? true),
      ...(container.settings.isolation ? { isolation: container.settings.isolation } : {}),
    };
    const egress = container.settings.egress;
    if (egress) await this.#pool.containerSettings.egress.update(container.key, egress.policy, egress.secrets);
    // What workerd put to the sidecar before this create named the sandbox's key.
    if (proxy?.workerdEgress !== undefined) this.#pool.containerSettings.egress.of(container.key).useWorkerd(proxy.workerdEgress);
    const starting = this.#pool.start(container.key, request, container.secret);
    container.starting = starting;
    let run: ContainerProcess;
    try {
      run = await starting;
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      this.#refusals.set(container.key, refusal);
      throw refusalError(refusal);
    } finally {
      if (container.starting === starting) container.starting = undefined;
    }
    this.#refusals.delete(container.key);
    container.run = run;
    this.#running(container);
    void run.exited.then((exit) => {
      if (container.run !== run) return;
      container.exitCode = exitStatus(exit);
      container.finishedAt = new Date().toISOString();
      if (container.status === "running") container.status = "exited";
    });
    return true;
  }

  #running(container: EngineContainer): void {
    container.status = "running";
    container.startedAt = new Date().toISOString();
    container.finishedAt = undefined;
  }

  /** Waits for it to stop running (or to be removed) and answers its exit status. */
  async wait(container: EngineContainer, condition: string): Promise<number> {
    if (condition === "removed") {
      await container.removed;
      return container.exitCode;
    }
    if (container.status === "running" && container.run) {
      const exit = await container.run.exited;
      return exitStatus(exit);
    }
    if (container.status === "running" && container.sidecarStopped) await container.sidecarStopped;
    return container.exitCode;
  }

  signal(container: EngineContainer, signo: number): void {
    if (container.status !== "running") throw new EngineError(409, `Container ${container.id} is not running`);
    if (container.run) container.run.signal(signo);
    else if (container.proxy && [1, 2, 9, 15].includes(signo)) this.#stopSidecar(container);
  }

  async remove(container: EngineContainer, force: boolean): Promise<void> {
    if (container.status === "running" && !force) throw new EngineError(409, `You cannot remove a running container ${container.id}. Stop the container before attempting removal or force remove`);
    if (container.status === "removing") return container.removed;
    container.status = "removing";
    try {
      if (container.run?.running) container.exitCode = exitStatus(await container.run.kill());
      if (container.proxy) this.#stopSidecar(container);
      // What workerd told its sidecar was for this container: the next one is told anew before it starts.
      else this.#pool.containerSettings.egress.of(container.key).useWorkerd(undefined);
    } finally {
      this.#byName.delete(container.name);
      container.markRemoved();
    }
  }

  /** The sandbox key of a sidecar's app: its create's choice once it exists, else the one its name gives. */
  #appKey(sidecar: EngineContainer): string {
    return this.#byName.get(appNameOf(sidecar.name))?.key ?? sidecar.key;
  }

  #stopSidecar(container: EngineContainer): void {
    container.proxy?.close();
    container.exitCode = 0;
    container.finishedAt = new Date().toISOString();
    if (container.status === "running") container.status = "exited";
    container.markSidecarStopped?.();
  }

  /** Ends every container (the runtime is closing). */
  async close(): Promise<void> {
    await Promise.all(this.list().map((container) => this.remove(container, true).catch(() => undefined)));
  }
}
