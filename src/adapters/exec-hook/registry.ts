/**
 * Exec-hook sandboxes by mode name: a hook runtime lets its user pick where hooks run ("direct",
 * "edge", or a mode someone registered) and looks the factory up by that name. One registry per
 * program, with `direct` (a local child process) and `edge` (a sandbox of this service) built in.
 */
import { directExecHookSandbox, type DirectExecHookConfig } from "./direct.ts";
import { edgeExecHookSandbox, type EdgeExecHookConfig } from "./edge.ts";
import type { ExecHookFactory } from "./types.ts";

/** Config of each known mode; registering a mode can extend this by declaration merging. */
export interface ExecHookModes {
  direct: DirectExecHookConfig | undefined;
  edge: EdgeExecHookConfig;
}

export class ExecHookModeError extends Error {
  readonly code: "MODE_EXISTS" | "UNKNOWN_MODE";
  readonly mode: string;
  /** The modes registered when the error happened. */
  readonly available: string[];

  constructor(code: "MODE_EXISTS" | "UNKNOWN_MODE", mode: string, available: string[]) {
    super(
      code === "MODE_EXISTS"
        ? `exec hook mode "${mode}" is already registered (replaceFactory replaces it)`
        : `unknown exec hook mode "${mode}"; available modes: ${available.join(", ")}`,
    );
    this.name = "ExecHookModeError";
    this.code = code;
    this.mode = mode;
    this.available = available;
  }
}

const factories = new Map<string, ExecHookFactory<never>>();

function modes(): string[] {
  return [...factories.keys()].sort();
}

/** Adds a mode; a name already taken is refused (ExecHookModeError, code MODE_EXISTS). */
export function registerFactory<Config>(mode: string, factory: ExecHookFactory<Config>): void {
  if (factories.has(mode)) throw new ExecHookModeError("MODE_EXISTS", mode, modes());
  factories.set(mode, factory as ExecHookFactory<never>);
}

/** Sets the factory of a mode, whether or not it was registered. */
export function replaceFactory<Config>(mode: string, factory: ExecHookFactory<Config>): void {
  factories.set(mode, factory as ExecHookFactory<never>);
}

/** The factory of a mode; an unknown mode is refused with the list of available ones (code UNKNOWN_MODE). */
export function lookupFactory<Mode extends keyof ExecHookModes>(mode: Mode): ExecHookFactory<ExecHookModes[Mode]>;
export function lookupFactory(mode: string): ExecHookFactory<unknown>;
export function lookupFactory(mode: string): ExecHookFactory<never> {
  const factory = factories.get(mode);
  if (!factory) throw new ExecHookModeError("UNKNOWN_MODE", mode, modes());
  return factory;
}

/** The registered mode names, sorted. */
export function registeredModes(): string[] {
  return modes();
}

registerFactory("direct", (config: DirectExecHookConfig | undefined) => directExecHookSandbox(config));
registerFactory("edge", edgeExecHookSandbox);
