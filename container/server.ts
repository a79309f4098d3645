/**
 * startServer: the container process server on node:http. Used by `npm run container` (main.ts),
 * by tests and benchmarks (in-process, port 0) and by the local container runtime.
 *
 * Everything a server keeps (its processes, the environment of its commands, its services) hangs on
 * its own context, so several servers can run in one process without seeing each other's state.
 */
import { CA_BUNDLE_VAR, CA_BUNDLE_VARIABLES } from "../protocol/network.ts";
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Router } from "../server-kit/http/router.ts";
import { listen, routeRequests, serveInProcess, type Listening } from "../server-kit/http/serve.ts";
import type { Duplex } from "node:stream";
import { resolveLimits, type ServerLimits } from "./config.ts";
import { CommandEnvironment, DEFAULT_PATH } from "./engine/environment.ts";
import { ProcessTable } from "./engine/process-table.ts";
import { CodeContexts } from "./interpreter/code-contexts.ts";
import type { CodeLanguage } from "../protocol/code.ts";
import { interpreterPrograms, warmLanguages, type InterpreterPrograms } from "./interpreter/languages.ts";
import { ROUTE_GROUPS } from "./http/routes/index.ts";
import { buildExecSchemas } from "./http/routes/exec.ts";
import { platformTrustBundle } from "./boot/platform-trust.ts";
import { imageEnvironment } from "./boot/server-env.ts";
import { serveTerminalSockets } from "./http/terminal-socket.ts";
import { portProxyServing } from "./http/port-proxy/serving.ts";
import { WorkClock } from "./services/work-clock.ts";
import { isObserving, OpenRequests } from "./http/open-requests.ts";
import { TerminalTable } from "./terminals/terminal-table.ts";
import { WatchSlots } from "./watch/watch-slots.ts";
import type { RequestContext, ServerContext } from "./http/types.ts";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServiceOptions } from "./services/options.ts";
import { createServerServices } from "./services/server-services.ts";
import { warmWhenQuiet } from "./interpreter/warm-when-quiet.ts";
import { bashDefaultOptions } from "./sessions/shell-state.ts";
import { PACKAGE_MANIFEST, serverAssetPath } from "./server-assets.ts";

/** Isolation (`isolation: "bwrap"`, `allowNetwork`, …), file limits and state dir: see ServiceOptions. */
export interface StartServerOptions extends ServiceOptions {
  /** Default 3000; 0 lets the OS pick. */
  port?: number;
  /** Default 127.0.0.1 (the image sets 0.0.0.0). */
  host?: string;
  /** A listening socket inherited as this descriptor, served instead of `port` and `host`. */
  listenFd?: number;
  /** Created if missing. Default `.sandbox/workspace`. */
  workspace?: string;
  /** HOME of commands. Default: the workspace. */
  home?: string;
  limits?: Partial<ServerLimits>;
  /**
   * Requests must carry it (`Authorization: Bearer …`). The local runtime gives each server one: on
   * loopback, commands of other sandboxes could reach the port. Unset: every request is served (in a
   * real container only that sandbox's own commands share the network).
   */
  secret?: string;
  /**
   * Tag of this server's run (the local runtime passes its own in RUN_TAG_VAR): every command's tag
   * lies below it, so the runtime finds all the server started. Default: the server's instance id.
   */
  runTag?: string;
  /** The interpreters of code contexts (default: SANDBOX_PYTHON, SANDBOX_NODE, else /usr/bin/python3 and this Node). */
  interpreters?: Partial<InterpreterPrograms>;
  /** Default code contexts started once the server is quiet after starting (default: SANDBOX_WARM_CODE, else python). */
  warmCodeLanguages?: readonly CodeLanguage[];
  /**
   * Served only to connections made in this process (`RunningServer.connect`), never on a socket,
   * and readies nothing once quiet: a warm server's rehearsal (boot/rehearsal.ts). `port`, `host`
   * and `listenFd` are then unused.
   */
  inProcess?: boolean;
}

export interface RunningServer {
  url: string;
  port: number;
  host: string;
  workspace: string;
  context: ServerContext;
  /** A new connection to a server started `inProcess` (undefined for one on a socket). */
  connect?: () => Duplex;
  /** Stops listening, ends open streams, kills every process. */
  close(): Promise<void>;
}

const VERSION = readVersion();

export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const workspace = resolve(options.workspace ?? ".sandbox/workspace");
  mkdirSync(workspace, { recursive: true });
  const limits = resolveLimits(options.limits);
  const bundle = process.env[CA_BUNDLE_VAR] ?? platformTrustBundle();
  const environment = new CommandEnvironment({
    // Under everything else: the image's environment, where this process was told it has one.
    ...imageEnvironment(process.env),
    PATH: process.env.PATH || DEFAULT_PATH,
    HOME: resolve(options.home ?? workspace),
    LANG: process.env.LANG || "C.UTF-8",
    // Outbound TLS is intercepted (the local proxy, or on Cloudflare the platform): every client is pointed at the bundle that holds its authority.
    ...(bundle ? Object.fromEntries(CA_BUNDLE_VARIABLES.map((name) => [name, bundle])) : {}),
  });
  const instanceId = randomUUID();
  const processes = new ProcessTable(workspace, limits, environment, options.runTag ?? instanceId);
  const services = createServerServices({ workspace, home: environment.base.HOME, processes }, options);
  const terminals = new TerminalTable({ workspace, environment, hooks: processes.hooks, limits, runTag: processes.runTag });
  const code = new CodeContexts({ programs: interpreterPrograms(options.interpreters), workspace, environment, hooks: processes.hooks, limits });

  const shutdown = new AbortController();
  const openRequests = new OpenRequests();
  const work = new WorkClock(() => ({
    processes: processes.keepingAwakeCount,
    codeCells: code.runningCount,
    terminals: terminals.liveCount,
    requests: openRequests.count,
  }));
  const context: ServerContext = {
    processes,
    terminals,
    environment,
    services,
    code,
    watches: new WatchSlots(() => limits.maxWatches),
    workspace,
    limits,
    instanceId,
    startedAt: Date.now(),
    version: VERSION,
    shutdown: shutdown.signal,
    openRequests,
    work,
  };

  const router = new Router(ROUTE_GROUPS.flatMap((group) => group.routes));
  const requests = routeRequests(router, (req, res, url, params): RequestContext => ({ req, res, url, params, server: context }), {
    secret: options.secret,
  });
  const ports = portProxyServing(services.isolation.ports, options.secret);
  let listening: Listening & { connect?: () => Duplex };
  try {
    const served = ports.around(requests);
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      if (!isObserving(req.url)) context.openRequests.track(res);
      served(req, res);
    };
    if (options.inProcess) {
      const inProcess = serveInProcess(handler);
      listening = { server: inProcess.server, host: "", port: 0, url: "", connect: inProcess.connect };
    } else {
      listening = await listen(handler, {
        port: options.port ?? 3000,
        host: options.host ?? "127.0.0.1",
        ...(options.listenFd === undefined ? {} : { fd: options.listenFd }),
      });
    }
  } catch (error) {
    services.close();
    throw error;
  }
  const { server } = listening;
  // A preview port's WebSocket is a request for as long as it is open: it keeps the sandbox awake.
  serveTerminalSockets(server, context, options.secret, (req, socket, head) => {
    const claimed = ports.claimUpgrade(req, socket, head);
    if (claimed) openRequests.trackSocket(socket);
    return claimed;
  });
  // Once the first request is answered and the server quiet (never before listening, nor beside a
  // new sandbox's first command: on a fraction of a CPU it slows both): bash's default options,
  // which session commands' captures compare against, the schemas of a first command (already built
  // in a server restored from the image's snapshot), and the code contexts.
  if (!options.inProcess) {
    warmWhenQuiet(context.openRequests, shutdown.signal, () => {
      void bashDefaultOptions();
      buildExecSchemas();
      code.warm(warmLanguages(options.warmCodeLanguages));
    });
  }

  let closing: Promise<void> | undefined;
  return {
    url: listening.url,
    port: listening.port,
    host: listening.host,
    workspace,
    context,
    ...(listening.connect ? { connect: listening.connect } : {}),
    close: () =>
      (closing ??= (async () => {
        shutdown.abort();
        work.close();
        const closed = new Promise<void>((done) => server.close(() => done()));
        server.closeIdleConnections();
        await Promise.all([processes.close(), code.close(), terminals.close()]);
        services.close();
        server.closeAllConnections();
        await closed;
      })()),
  };
}

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(serverAssetPath(PACKAGE_MANIFEST), "utf8")) as { version?: string };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}
