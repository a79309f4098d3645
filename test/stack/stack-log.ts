/** The line the shared stack's log ends with once the stack's process is gone (written by stack.ts, read by ready.ts). */
export const STACK_EXITED = "[the stack exited]";
