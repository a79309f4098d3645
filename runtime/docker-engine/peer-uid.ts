/**
 * Which user of this machine holds the other end of a loopback TCP connection, read from the kernel's
 * socket table (/proc/net/tcp): each socket's row names its local and remote address and its owner's
 * uid. A listener on 127.0.0.1 is reachable by every local user; this is how one tells them apart.
 * The kernel writes that table out whole for each read (tens of milliseconds on a busy machine), so
 * it is read off the event loop, and only where a request must be told apart (never per tunnel).
 */
import { readFile } from "node:fs/promises";

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

/**
 * The uid owning the peer's socket of a connection we accepted (`peer` is its remote end, `local`
 * ours), or undefined when the table has no such row (an IPv6 peer, a connection gone already).
 */
export async function peerUid(peer: { address: string; port: number }, local: { address: string; port: number }): Promise<number | undefined> {
  const theirs = tableAddress(peer.address, peer.port);
  const ours = tableAddress(local.address, local.port);
  if (!theirs || !ours) return undefined;
  let table: string;
  try {
    table = await readFile("/proc/net/tcp", "utf8");
  } catch {
    return undefined;
  }
  for (const line of table.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid …
    if (fields[1] === theirs && fields[2] === ours) return Number(fields[7]);
  }
  return undefined;
}
