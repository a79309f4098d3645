/**
 * Test servers with sandbox options (isolation, file limits) on temp workspaces, and small clients
 * for the JSON routes. Builds on helpers.ts.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type RunningServer, type StartServerOptions } from "../../container/server.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { call, withoutInProcessServer, type JsonReply } from "./helpers.ts";
import { startImageServer, testImage } from "./image-server.ts";

export interface SandboxServer {
  server: RunningServer;
  url: string;
  workspace: string;
  exec(body: Record<string, unknown>): Promise<JsonReply>;
  post(path: string, body: unknown): Promise<JsonReply>;
  get(path: string): Promise<JsonReply>;
  close(): Promise<void>;
}

export async function startSandbox(options: Omit<StartServerOptions, "port" | "host" | "workspace"> = {}): Promise<SandboxServer> {
  const image = testImage();
  if (image) {
    const started = withoutInProcessServer(await startImageServer(image), Object.keys(options));
    return Object.assign(started, {
      exec: (body: Record<string, unknown>) => call(started.url, "POST", "/api/execute", body),
      post: (path: string, body: unknown) => call(started.url, "POST", path, body),
      get: (path: string) => call(started.url, "GET", path),
    });
  }
  // realpath: on some systems the temp dir is reached through a symlink.
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "sandbox-ws-")));
  const server = await startServer({ port: 0, host: "127.0.0.1", workspace, ...options });
  return {
    server,
    url: server.url,
    workspace,
    exec: (body) => call(server.url, "POST", "/api/execute", body),
    post: (path, body) => call(server.url, "POST", path, body),
    get: (path) => call(server.url, "GET", path),
    async close() {
      await server.close();
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/** Why bwrap tests cannot run here, or undefined when they can. */
export function bwrapUnavailableReason(): string | undefined {
  const support = detectIsolation();
  return support.bwrap.available ? undefined : support.bwrap.reason ?? "bwrap is not available";
}
