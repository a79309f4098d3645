/**
 * Which user of this machine holds the other end of a loopback TCP connection, read from the kernel's
 * socket table (/proc/net/tcp): each socket's row names its local and remote address and its owner's
 * uid. A listener on 127.0.0.1 is reachable by every local user; this is how one tells them apart.
 * The kernel writes that table a page per read, walking its whole hash table for each (milliseconds
 * on a machine with much memory, whatever few sockets it holds), so it is read off the event loop,
 * page by page, and no further than the row asked for; and only where a request must be told apart
 * (never per tunnel to the container's server).
 */
import { open } from "node:fs/promises";

/** `127.0.0.1:8080` as the table writes it: the address's bytes in host order, then the port, in hex. */
function tableAddress(ip: string, port: number): string | undefined {
  const parts = ip.replace(/^::ffff:/, "").split(".").map(Number);
  if (parts.length !== 4 || parts.some((part) => !Number.isInteger(part) || part < 0 || part > 255)) return undefined;
  const hex = parts
    .reverse()
    .map((part) => part.toString(16).padStart(2, "0"))
    .join("")
    .toUpperCase();
  return `${hex}:${port.toString(16).padStart(4, "0").toUpperCase()}`;
}

/** The uid of the row whose local and remote addresses are `theirs` and `ours`, in one line of the table. */
function uidOfRow(line: string, theirs: string, ours: string): number | undefined {
  const fields = line.trim().split(/\s+/);
  // sl local_address rem_address st tx:rx tr:when retrnsmt uid …
  return fields[1] === theirs && fields[2] === ours ? Number(fields[7]) : undefined;
}

/**
 * The uid owning the peer's socket of a connection we accepted (`peer` is its remote end, `local`
 * ours), or undefined when the table has no such row (an IPv6 peer, a connection gone already).
 */
export async function peerUid(peer: { address: string; port: number }, local: { address: string; port: number }): Promise<number | undefined> {
  const theirs = tableAddress(peer.address, peer.port);
  const ours = tableAddress(local.address, local.port);
  if (!theirs || !ours) return undefined;
  let table;
  try {
    table = await open("/proc/net/tcp", "r");
  } catch {
    return undefined;
  }
  try {
    const page = Buffer.alloc(64 * 1024);
    let partial = "";
    for (;;) {
      const { bytesRead } = await table.read(page, 0, page.length, null);
      if (bytesRead === 0) return partial === "" ? undefined : uidOfRow(partial, theirs, ours);
      const lines = (partial + page.toString("latin1", 0, bytesRead)).split("\n");
      partial = lines.pop()!;
      for (const line of lines) {
        const uid = uidOfRow(line, theirs, ours);
        if (uid !== undefined) return uid;
      }
    }
  } catch {
    return undefined;
  } finally {
    await table.close();
  }
}
