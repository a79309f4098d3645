/**
 * The service's answers in Mastra's terms: `getInfo()` details become a Mastra SandboxInfo (status,
 * resources in MB, isolation in the metadata), and the machine's isolation support becomes the
 * detection result LocalSandbox.detectIsolation() returns.
 */
import type { SandboxDetectionResult, SandboxInfo } from "@mastra/core/workspace";
import type { IsolationSupport, SandboxDetails } from "../../client/index.ts";

const MB = 1024 * 1024;

export function sandboxInfo(
  sandbox: Pick<SandboxInfo, "id" | "name" | "provider" | "status"> & { workingDirectory: string | undefined },
  details: SandboxDetails | undefined,
  createdAt: Date,
): SandboxInfo {
  const info: SandboxInfo = {
    id: sandbox.id,
    name: sandbox.name,
    provider: sandbox.provider,
    status: sandbox.status,
    createdAt: details ? new Date(details.containerStartedAt) : createdAt,
  };
  if (!details) return info;
  const { memory, cpus, disk } = details.resources;
  info.resources = {
    memoryMB: Math.round(memory.totalBytes / MB),
    memoryUsedMB: Math.round(memory.usedBytes / MB),
    cpuCores: cpus,
    diskMB: Math.round(disk.totalBytes / MB),
    diskUsedMB: Math.round(disk.usedBytes / MB),
  };
  info.metadata = {
    workingDirectory: sandbox.workingDirectory ?? details.workspace,
    workspace: details.workspace,
    isolation: details.isolation.mode,
    isolationConfig: details.isolation,
    generation: details.generation,
    sleepAfter: details.sleepAfter,
    platform: details.platform,
    processes: details.processes.live,
  };
  return info;
}

export function detectionResult(support: IsolationSupport): SandboxDetectionResult {
  const { bwrap } = support;
  if (bwrap.available) {
    return { backend: "bwrap", available: true, message: `bubblewrap${bwrap.version ? ` ${bwrap.version}` : ""} is available to the sandbox` };
  }
  return { backend: "bwrap", available: false, message: `bubblewrap is not available to the sandbox${bwrap.reason ? `: ${bwrap.reason}` : ""}` };
}
