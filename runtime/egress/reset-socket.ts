/**
 * Ends a connection with a reset, also one whose side was ended a moment ago. A socket's reset is
 * refused (EINVAL) while its own end is still on its way out, and the socket is then dropped without
 * its descriptor being closed: the connection stayed open on both hosts, half-closed, for good. Such
 * a socket is reset once its end has gone out.
 */
import type { Socket } from "node:net";

export function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded && !socket.writableFinished) socket.once("finish", () => socket.resetAndDestroy());
  else socket.resetAndDestroy();
}
