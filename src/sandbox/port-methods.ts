/**
 * The Durable Object's preview-port methods, and the serving of a preview port's requests (which come
 * through the object's fetch, not RPC). The registry (ports.ts) keeps exposures and tokens in
 * storage and decides from storage alone whether a request is let through, so a port that is not
 * exposed, a caller without its token, or an exposure made in an earlier container never wakes one.
 */
import { errorBody } from "../../protocol/errors.ts";
import type { PingResponse } from "../../protocol/process.ts";
import { INFO_ROUTES } from "../../protocol/info.ts";
import { asSandboxError } from "../rpc/errors.ts";
import { serviceOrigin, type PortRequestParts } from "../rpc/ports.ts";
import { previewSettings } from "../rpc/preview-urls.ts";
import { ContainerApi } from "./container-api.ts";
import { guardedPortResponse } from "./port-guards.ts";
import { forwardToPort, staleUrl, type UrlContext } from "./ports.ts";
import type { FamilyMethods, SandboxShell } from "./shell.ts";

export const portMethods = {
  /** Starts the container when none runs: an exposure is served by the container it was made in (ports.ts). */
  exposePort: (shell, port, options = {}) =>
    shell.guard(() => shell.ports.expose(port, options, previewUrls(shell), async () => (await shell.keepingAwake(() => shell.link())).generation.instanceId)),

  /** Needs no container; a port that is not exposed is no error. */
  unexposePort: (shell, port) =>
    shell.guard(async () => {
      await shell.ports.unexpose(port);
      return { port };
    }),

  /** The ports the running container serves; never wakes one. */
  getExposedPorts: (shell, options = {}) =>
    shell.guard(async () => {
      const origin = typeof options === "string" ? serviceOrigin({ hostname: options }) : options.origin;
      return shell.ports.list(previewUrls(shell), origin, await runningGeneration(shell));
    }),
} satisfies FamilyMethods;

/**
 * A proxied request for a preview port (see portProxyRequest), as the object's fetch hands it on.
 * Errors are answered as coded JSON, never thrown: this is an HTTP exchange, not an RPC call.
 */
export async function servePort(shell: SandboxShell, parts: PortRequestParts, request: Request): Promise<Response> {
  try {
    let admittedIn: string | undefined;
    const { answer, isPublic } = await shell.ports.admit(parts, request, async () => (admittedIn = await runningGeneration(shell)));
    if (answer) return answer;
    shell.noteActivity();
    let forwarded: Response;
    try {
      forwarded = await forwardToPort(shell.serverPort(), parts, request, isPublic);
    } catch (error) {
      // The container went away between the check and the request (or before this object noticed):
      // asked afresh, a container that is gone or another one makes the URL stale, not broken.
      shell.generations.reset();
      if ((await runningGeneration(shell)) !== admittedIn) throw staleUrl(parts.port);
      throw error;
    }
    const response = guardedPortResponse(parts, request, forwarded);
    if (response.status === 101 || response.body === null) return response;
    // A long answer (a stream, a download) keeps the container awake while it flows.
    return new Response(shell.guardStream(response.body), response);
  } catch (error) {
    const coded = asSandboxError(error);
    return Response.json(errorBody(coded.code, coded.message, coded.context), { status: coded.httpStatus });
  }
}

function previewUrls(shell: SandboxShell): UrlContext {
  return { sandboxId: shell.sandboxId, settings: previewSettings(shell.env) };
}

/** The running container's instance id (asked of it once per container), or undefined when none runs or it does not answer. */
async function runningGeneration(shell: SandboxShell): Promise<string | undefined> {
  const container = shell.ctx.container;
  if (!container?.running) return undefined;
  try {
    const api = new ContainerApi(shell.serverPort());
    return (await shell.generations.current(() => api.json<PingResponse>("GET", INFO_ROUTES.ping))).instanceId;
  } catch {
    return undefined;
  }
}
