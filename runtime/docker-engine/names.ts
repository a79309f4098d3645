/**
 * How Docker's names map onto the runtime's: a container name onto a sandbox key (the folder, the
 * egress entry and the pool slot it gets), a sidecar's name onto its app's, and Docker's signal names
 * onto numbers. workerd names a Durable Object's container `workerd-<namespace key>-<object id>` and
 * its sidecar the same with `-proxy`.
 */
import { createHash } from "node:crypto";
import { constants } from "node:os";
import { isValidSandboxId } from "../../protocol/sandbox.ts";

/** The suffix workerd gives a container's egress sidecar. */
export const SIDECAR_SUFFIX = "-proxy";

/**
 * The egress sidecar image named to workerd where no tool names one (Miniflare's containerEngine in
 * tests): the engine serves every sidecar itself, whatever image it is asked for.
 */
export const EGRESS_SIDECAR_IMAGE = "edge-sandbox/egress-sidecar:local";

/** The port the sidecar's ingress and control listen on inside its namespace (its one published port). */
export const SIDECAR_INGRESS_PORT = "39001/tcp";

/**
 * The bridge network's gateway, as `GET /networks/bridge` says it: where workerd binds its egress
 * listener on Linux. Loopback: the proxy reaches it there, and no sandbox can (a sandbox's own
 * loopback is its namespace's, and the proxy never dials loopback for a sandbox).
 */
export const BRIDGE_GATEWAY = "127.0.0.1";

const DURABLE_OBJECT_ID = /-([0-9a-f]{64})$/;

/**
 * The sandbox key of a container name: the Durable Object's id where the name ends with one (so one
 * object keeps one folder across its containers), else the name where it is a valid key, else a hash.
 */
export function sandboxKeyOf(name: string): string {
  const id = DURABLE_OBJECT_ID.exec(name)?.[1];
  if (id) return id;
  if (isValidSandboxId(name)) return name;
  return `engine-${createHash("sha256").update(name).digest("hex").slice(0, 40)}`;
}

export function isSidecarName(name: string): boolean {
  return name.endsWith(SIDECAR_SUFFIX);
}

/** The app container a sidecar carries traffic for. */
export function appNameOf(sidecarName: string): string {
  return sidecarName.slice(0, -SIDECAR_SUFFIX.length);
}

/** A signal as Docker's kill takes it (`SIGTERM`, `TERM` or `15`) → its number, or undefined. */
export function signalNumber(value: string | null): number | undefined {
  if (value === null || value === "") return constants.signals.SIGKILL;
  if (/^\d+$/.test(value)) {
    const signo = Number(value);
    return signo >= 1 && signo <= 64 ? signo : undefined;
  }
  const name = (value.toUpperCase().startsWith("SIG") ? value.toUpperCase() : `SIG${value.toUpperCase()}`) as keyof typeof constants.signals;
  return constants.signals[name];
}

/** Docker's exit status of a run that ended by a signal: 128 + its number. */
export function exitStatus(exit: { exitCode: number; signal?: string }): number {
  if (exit.signal) return 128 + (constants.signals[exit.signal as keyof typeof constants.signals] ?? 9);
  return exit.exitCode;
}
