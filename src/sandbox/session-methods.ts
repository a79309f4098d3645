/**
 * The Durable Object's session methods (their calls to the container: sessions.ts), and env vars:
 * a session's go to the container, the sandbox's own join its kept config (so a restarted
 * container gets them too).
 */
import { updatedEnv } from "./config.ts";
import * as sessions from "./sessions.ts";
import type { FamilyMethods } from "./shell.ts";

export const sessionMethods = {
  createSession: (shell, options = {}) => shell.call(({ api }) => sessions.createSession(api, options)),

  getSession: (shell, id) => shell.call(({ api }) => sessions.getSession(api, id)),

  listSessions: (shell) => shell.call(({ api }) => sessions.listSessions(api)),

  deleteSession: (shell, id) => shell.call(({ api }) => sessions.deleteSession(api, id)),

  setEnvVars: (shell, vars, options = {}) => {
    const { sessionId } = options;
    if (sessionId !== undefined) return shell.call(({ api }) => sessions.setSessionEnv(api, sessionId, sessions.envUpdate(vars)));
    return shell.guard(async () => {
      const update = sessions.envUpdate(vars);
      await shell.updateConfig((stored) => ({ ...stored, envVars: updatedEnv(stored.envVars, update) }));
      // A running container is given them at once (the link applies what changed).
      if (shell.ctx.container?.running) await shell.link();
    });
  },
} satisfies FamilyMethods;
