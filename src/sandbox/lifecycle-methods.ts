/**
 * The Durable Object's methods on the sandbox itself: its settings, what it reports, and destroying
 * it. The lifecycle they read and change (starting, sleeping, generations) is the object's own
 * (durable-object.ts).
 */
import { INFO_ROUTES, type InfoResponse, type InstructionsResponse } from "../../protocol/info.ts";
import type { PersistenceStatus } from "../../protocol/backups.ts";
import { sandboxConfigSchema } from "../../protocol/sandbox-config.ts";
import type { DestroyOptions } from "../rpc/backups.ts";
import type { SandboxInfo } from "../rpc/sandbox.ts";
import { PLATFORM_ISOLATION } from "./config.ts";
import { keepAliveStatus } from "./keep-alive.ts";
import type { Generation } from "./generation.ts";
import { parseRequest } from "./request.ts";
import type { FamilyMethods, SandboxShell } from "./shell.ts";

/** "started" once a container ran, "destroyed" after destroy(): whether a sandbox that is not running is asleep or gone. */
export const LIFE_KEY = "lifecycle:last";

export const lifecycleMethods = {
  configure: (shell, config) =>
    shell.guard(async () => {
      const valid = parseRequest(sandboxConfigSchema, config, "sandbox config");
      // A field given as undefined keeps its stored value (`{isolation: opts.isolation}` must not reset it).
      const given = Object.fromEntries(Object.entries(valid).filter(([, value]) => value !== undefined));
      await shell.updateConfig((stored) => ({ ...stored, ...given }));
    }),

  info: (shell) => shell.call(async ({ generation }) => describe(shell, generation)),

  /** Never starts a container. */
  status: (shell) =>
    shell.guard(async () => {
      const running = shell.ctx.container?.running === true;
      return { running, asleep: !running && (await shell.ctx.storage.get(LIFE_KEY)) === "started" };
    }),

  /** info() plus what the container server reports: status, resources, isolation in effect. */
  getInfo: (shell) =>
    shell.call(async ({ api, generation }) => {
      const { instanceId: _id, ...report } = await api.record<InfoResponse>("GET", INFO_ROUTES.info);
      const { settings, facts, verdict } = await shell.keepAliveReading(report, 1);
      const startup = shell.startup();
      return {
        ...describe(shell, generation),
        ...report,
        ...(startup ? { startup } : {}),
        persistence: await persistenceReport(shell),
        keepAlive: keepAliveStatus(settings, facts, verdict),
      };
    }),

  /** A few lines describing the sandbox, for an agent's tool prompt. */
  getInstructions: (shell) => shell.call(async ({ api }) => (await api.json<InstructionsResponse>("GET", INFO_ROUTES.instructions)).instructions),

  detectIsolation: (shell) => shell.guard(async () => (await shell.runtime?.detectIsolation()) ?? PLATFORM_ISOLATION),
} satisfies FamilyMethods;

/**
 * destroy(): stops the container now (SIGKILL to everything in it); the next call starts a new
 * generation. `keep: true` saves the durable workspace first (and destroys nothing when that
 * fails); without it the durable workspace is forgotten. The class's own method calls it, since
 * it overrides the base class's destroy().
 */
export function destroySandbox(shell: SandboxShell, options: DestroyOptions = {}): Promise<void> {
  return shell.guard(async () => {
    if (options.keep === true) {
      shell.persistence.assertEnabled();
      if (shell.ctx.container?.running) {
        const { api, generation } = await shell.link();
        await shell.persistence.save(api, generation.instanceId);
      }
    } else {
      await shell.persistence.discard();
    }
    // Every preview token dies before the container does: from here its URLs answer 404.
    await shell.ports.revokeAll();
    await shell.ledger.forget();
    shell.runKeys.forget();
    await shell.destroyContainer();
    await shell.ctx.storage.put(LIFE_KEY, "destroyed");
  });
}

function describe(shell: SandboxShell, generation: Generation): SandboxInfo {
  const { instanceId, number, startedAt } = generation;
  return { generation: instanceId, generationNumber: number, containerStartedAt: startedAt, sleepAfter: String(shell.object.sleepAfter) };
}

/** The durable workspace's status, with what the sandbox's snapshots hold where the bucket is bound. */
async function persistenceReport(shell: SandboxShell): Promise<PersistenceStatus> {
  const status = await shell.persistence.status();
  try {
    const usage = await shell.persistence.backups().usage();
    const quota = shell.backupQuota();
    return { ...status, backups: { ...usage, ...(Object.keys(quota).length > 0 ? { quota } : {}) } };
  } catch {
    return status;
  }
}
