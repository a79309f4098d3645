/** Shared bits of the stack tests: how to reach the stack, and sandbox ids that never collide. */
import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    stackUrl: string;
    stackToken: string;
    stackLog: string;
  }
}

const run = Math.random().toString(36).slice(2, 8);
let counter = 0;

/** A fresh sandbox id per call. */
export function uniqueId(label: string): string {
  return `${label}-${run}-${++counter}`;
}

/** `{ url, token, sandboxId }` of a fresh sandbox on the shared stack. */
export function httpConnection(label: string): { url: string; token: string; sandboxId: string } {
  return { url: inject("stackUrl"), token: inject("stackToken"), sandboxId: uniqueId(label) };
}
