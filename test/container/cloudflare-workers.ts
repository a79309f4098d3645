/**
 * A stand-in for the `cloudflare:workers` module, so Cloudflare's Sandbox SDK bundle loads in Node for
 * the tests that drive our container server through its route clients. The route clients use none of
 * it; the bundle only needs the names to exist when it defines its Durable Object classes.
 */
export class DurableObject {
  readonly ctx: unknown;
  readonly env: unknown;

  constructor(ctx: unknown, env: unknown) {
    this.ctx = ctx;
    this.env = env;
  }
}

export class WorkerEntrypoint extends DurableObject {}

export class RpcTarget {}

export const env: Record<string, unknown> = {};

export const tracing = {
  enterSpan<T>(_name: string, callback: (span: { setAttribute(): void }) => T): T {
    return callback({ setAttribute() {} });
  },
};
