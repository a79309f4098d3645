/**
 * The runtime's Docker engine on a unix socket in its data folder, in a folder only the runtime's
 * user may enter (the socket starts containers: it is as powerful as the runtime's own API). workerd
 * and wrangler are pointed at it as `unix://<path>`.
 */
import { createServer, type Server } from "node:http";
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { StartRefusal } from "../../protocol/runtime.ts";
import type { OperatorPolicy } from "../policy.ts";
import type { ContainerPool } from "../pool.ts";
import { DockerEngine } from "./engine.ts";
import { engineRequests, type UnservedCall } from "./routes.ts";

/** Where the socket is, below the data folder. */
export const ENGINE_SOCKET_DIR = ".docker-engine";
export const ENGINE_SOCKET_NAME = "docker.sock";

export interface RunningEngine {
  readonly engine: DockerEngine;
  /** The socket's path. */
  readonly path: string;
  /** `unix://<path>`: what DOCKER_HOST, WRANGLER_DOCKER_HOST or Miniflare's containerEngine take. */
  readonly url: string;
  /** Calls the engine did not serve, in order. */
  readonly unserved: UnservedCall[];
  close(): Promise<void>;
}

/** `refusals`: why each sandbox's last start was refused, kept for the runtime's API to answer. */
export async function startEngine(pool: ContainerPool, policy: OperatorPolicy, dataDir: string, refusals: Map<string, StartRefusal>): Promise<RunningEngine> {
  const dir = join(dataDir, ENGINE_SOCKET_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const path = join(dir, ENGINE_SOCKET_NAME);
  rmSync(path, { force: true });
  const engine = new DockerEngine(pool, policy, refusals);
  const unserved: UnservedCall[] = [];
  const server: Server = createServer(
    engineRequests(engine, (call) => {
      unserved.push(call);
      console.warn(`runtime: the Docker engine does not serve ${call.method} ${call.path}`);
    }),
  );
  // A long wait (a container's monitor) holds its request for as long as the container runs.
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return {
    engine,
    path,
    url: `unix://${path}`,
    unserved,
    async close() {
      await engine.close();
      server.close();
      server.closeAllConnections();
      rmSync(path, { force: true });
    },
  };
}
