/**
 * `@cloudflare/containers` keeps its container's state (running, healthy, stopped) in storage and
 * writes it at every start: once before the start's health check, once before the first call. Each
 * write, as workerd gates output, holds the next outgoing request (to the container, through its
 * sidecar) until it is committed. Here those writes are made with `allowUnconfirmed`: each is kept
 * as before, in the same order, but requests go at once. A write that fails resets the object, which
 * then reads the last committed state and, as ever, believes the container (`running`) over it.
 */

/** What the package's state keeper reads and writes through (its `storage`). */
interface StateStorage {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
}

/**
 * Points the container state keeper of `container` (the package's `state` field, which its types call
 * private; the package is pinned to an exact version) at `storage` with unconfirmed writes. A
 * container without that keeper is left as it is.
 */
export function writeContainerStateUnconfirmed(container: object, storage: DurableObjectStorage): void {
  const keeper = (container as { state?: { storage?: StateStorage } }).state;
  if (!keeper?.storage) return;
  keeper.storage = {
    get: (key) => storage.get(key),
    put: (key, value) => storage.put(key, value, { allowUnconfirmed: true }),
  };
}
