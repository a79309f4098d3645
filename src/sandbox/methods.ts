/**
 * The Sandbox Durable Object's RPC methods, gathered from their families (`*-methods.ts`, one per
 * family of the bindings table in src/rpc/bindings/). The table's type holds it to the object's
 * whole RPC surface (SandboxObject): a method missing, extra or with another signature is a type
 * error here. installMethods puts each one on the class's prototype as an ordinary method, where
 * Workers RPC finds it (a function on the instance would not be offered).
 */
import { backupMethods } from "./backup-methods.ts";
import { codeMethods } from "./code-methods.ts";
import { fileMethods } from "./file-methods.ts";
import { lifecycleMethods } from "./lifecycle-methods.ts";
import { networkMethods } from "./network-methods.ts";
import { portMethods } from "./port-methods.ts";
import { processMethods } from "./process-methods.ts";
import { sessionMethods } from "./session-methods.ts";
import type { SandboxShell, ShellMethods } from "./shell.ts";
import { terminalMethods } from "./terminal-methods.ts";

export const SANDBOX_METHODS = {
  ...processMethods,
  ...sessionMethods,
  ...fileMethods,
  ...codeMethods,
  ...terminalMethods,
  ...portMethods,
  ...lifecycleMethods,
  ...backupMethods,
  ...networkMethods,
} satisfies ShellMethods;

/** A method the table has that the object's RPC surface lacks is a type error here. */
type Extra = Exclude<keyof typeof SANDBOX_METHODS, keyof ShellMethods>;
const noExtraMethods: [Extra] extends [never] ? true : Extra = true;
void noExtraMethods;

type AnyShellMethod = (shell: SandboxShell, ...args: unknown[]) => unknown;

/** Defines each method on `prototype` as a class would (not enumerable), calling its family with the object's shell. */
export function installMethods(prototype: object, shellOf: (object: unknown) => SandboxShell): void {
  for (const [name, method] of Object.entries(SANDBOX_METHODS) as [string, AnyShellMethod][]) {
    // A named method, so that stack traces say which one.
    const { [name]: rpcMethod } = {
      [name](this: unknown, ...args: unknown[]) {
        return method(shellOf(this), ...args);
      },
    };
    Object.defineProperty(prototype, name, { value: rpcMethod, writable: true, configurable: true, enumerable: false });
  }
}
