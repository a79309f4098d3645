/**
 * `GET /api/info`: what a sandbox is and has (status, resources, isolation), and
 * `GET /api/instructions`: a short plain-text description of it for an agent's tool prompt.
 */
import type { IsolationInEffect } from "./isolation.ts";
import type { SuccessEnvelope } from "./process.ts";

/** `ping`: liveness and the boot id that tells a caller the container was restarted. */
export const INFO_ROUTES = { ping: "/api/ping", info: "/api/info", instructions: "/api/instructions" } as const;

export interface SandboxResources {
  /** Bytes. Within a memory-limited cgroup these are the cgroup's limit and usage. */
  memory: { totalBytes: number; usedBytes: number; availableBytes: number; source: "cgroup" | "host" };
  /** CPUs this server may use (a cgroup CPU quota rounds up). */
  cpus: number;
  loadAverage: [number, number, number];
  /** The filesystem holding the workspace. */
  disk: { path: string; totalBytes: number; usedBytes: number; availableBytes: number };
  /** Processes and threads of the sandbox's control group and its limit, where the sandbox sees its group. */
  processes?: { current: number; max?: number };
}

export type InfoResponse = SuccessEnvelope & {
  status: "ok";
  instanceId: string;
  version: string;
  uptimeMs: number;
  workspace: string;
  resources: SandboxResources;
  isolation: IsolationInEffect;
  processes: { live: number };
  /**
   * Who is using the sandbox now: requests being answered (streams among them) and live terminals,
   * and for how long no request has been open (ms; 0 while one is).
   */
  activity: { openRequests: number; terminals: number; quietMs: number };
  sessions: number;
  platform: { os: string; arch: string; kernel: string; node: string };
};

export type InstructionsResponse = SuccessEnvelope & {
  /** Plain text, a few lines: workspace, isolation, network, tools on PATH. */
  instructions: string;
};
