/**
 * A sandbox's idle connections to the servers it reached, kept a few seconds for its next request
 * to the same address, port and TLS name: a client that opens a connection for each request (curl
 * run in a loop) does not cost a new TCP and TLS handshake upstream each time. Only connections
 * whose last answer ended cleanly are kept (upstream-connection.ts says which); one that closes,
 * or says anything while idle, is dropped. Kept per sandbox, never shared between sandboxes, and
 * closed with its container: one given back after that (by a connection the stop cut) is ended.
 */
import type { UpstreamConnection } from "./upstream-connection.ts";

/** How long an idle connection is kept: less than the 5 s servers commonly keep one (Node, nginx 75 s). */
const IDLE_MS = 4_000;
/** Idle connections kept per address, port and TLS name. */
const MAX_IDLE_PER_KEY = 8;

interface Idle {
  connection: UpstreamConnection;
  timer: NodeJS.Timeout;
  drop(): void;
}

export class UpstreamPool {
  readonly #idle = new Map<string, Idle[]>();
  #closed = false;

  /** Keeps `connection` for the next request to its key, or ends it when it cannot serve one. */
  give(connection: UpstreamConnection): void {
    const list = this.#idle.get(connection.key) ?? [];
    if (this.#closed || !connection.reusable || list.length >= MAX_IDLE_PER_KEY) {
      connection.destroy();
      return;
    }
    const idle: Idle = {
      connection,
      timer: setTimeout(() => idle.drop(), IDLE_MS).unref(),
      drop: () => {
        this.#remove(idle);
        connection.destroy();
      },
    };
    connection.socket.once("close", idle.drop);
    list.push(idle);
    this.#idle.set(connection.key, list);
  }

  /** The most recently kept connection for `key` that can still serve a request. */
  take(key: string): UpstreamConnection | undefined {
    const list = this.#idle.get(key);
    for (let idle = list?.pop(); idle; idle = list?.pop()) {
      this.#remove(idle);
      if (idle.connection.reusable) return idle.connection;
      idle.connection.destroy();
    }
    return undefined;
  }

  /** Keeps connections again (the sandbox's container started). */
  open(): void {
    this.#closed = false;
  }

  /** Ends every idle connection, and every one given back until it opens again (the sandbox's container stopped). */
  close(): void {
    this.#closed = true;
    for (const list of [...this.#idle.values()]) for (const idle of [...list]) idle.drop();
  }

  #remove(idle: Idle): void {
    clearTimeout(idle.timer);
    idle.connection.socket.off("close", idle.drop);
    const list = this.#idle.get(idle.connection.key);
    const at = list?.indexOf(idle) ?? -1;
    if (at >= 0) list!.splice(at, 1);
    if (list?.length === 0) this.#idle.delete(idle.connection.key);
  }
}
