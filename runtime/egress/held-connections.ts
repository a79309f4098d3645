/**
 * The connections a sandbox holds open through the proxy while its container runs: at most
 * PROXY_LIMITS.connectionsPerSandbox at once, each charged to the sandbox's share of the proxy's
 * buffers (proxy-memory.ts), and all of them cut when the container stops. A connection past the
 * cap is reset as soon as it is accepted; its refusal is said in the audit trail at once, and those
 * that follow it within a second in one entry more, so a sandbox that keeps knocking cannot flood
 * its trail.
 */
import type { Socket } from "node:net";
import { PROXY_LIMITS } from "./proxy-limits.ts";
import { resetSocket } from "./reset-socket.ts";
import { ByteBudget, chargeTo, RUNTIME_BUFFERS } from "./proxy-memory.ts";

/** How long refusals are counted together before they are said in one entry. */
const REFUSALS_WINDOW_MS = 1_000;

/** Told of refusals: the first one alone, then how many more came in the window after it. */
export type RefusalNotice = (refused: { count: number; ip: string; port: number }) => void;

export class HeldConnections {
  /** The sandbox's share of the proxy's buffers. */
  readonly buffers = new ByteBudget(PROXY_LIMITS.bufferedPerSandbox, RUNTIME_BUFFERS);
  readonly #sockets = new Set<Socket>();
  readonly #notice: RefusalNotice;
  #window: { count: number; ip: string; port: number; timer: NodeJS.Timeout } | undefined;

  constructor(notice: RefusalNotice) {
    this.#notice = notice;
  }

  get size(): number {
    return this.#sockets.size;
  }

  /** Takes `socket` as one of the sandbox's (true), or resets it when the sandbox already holds its cap (false). */
  admit(socket: Socket, destination: { ip: string; port: number }): boolean {
    if (this.#sockets.size >= PROXY_LIMITS.connectionsPerSandbox) {
      socket.resetAndDestroy();
      this.#refused(destination);
      return false;
    }
    this.#sockets.add(socket);
    socket.once("close", () => this.#sockets.delete(socket));
    chargeTo(socket, this.buffers);
    return true;
  }

  /** Cuts every connection (the container stopped); the proxy's connections to servers go with them. */
  closeAll(): void {
    for (const socket of this.#sockets) resetSocket(socket);
    this.#sockets.clear();
  }

  #refused(destination: { ip: string; port: number }): void {
    if (this.#window) {
      this.#window.count += 1;
      this.#window.ip = destination.ip;
      this.#window.port = destination.port;
      return;
    }
    this.#notice({ count: 1, ...destination });
    const window = {
      count: 0,
      ...destination,
      timer: setTimeout(() => {
        this.#window = undefined;
        if (window.count > 0) this.#notice({ count: window.count, ip: window.ip, port: window.port });
      }, REFUSALS_WINDOW_MS).unref(),
    };
    this.#window = window;
  }
}
