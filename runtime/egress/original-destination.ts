/**
 * Where a redirected connection was going. The sandbox's namespace redirects every outbound TCP
 * connection to the proxy's listener (nftables `redirect`); the kernel's connection tracking keeps
 * the translation, and its reply tuple (from the listener back to the sandbox's socket) is unique
 * by construction. So the entry whose reply side is exactly (listener → the peer the proxy sees)
 * names the original destination (the peer's port there is the one it arrived with, which is not
 * always the one it left with). Node cannot ask the socket for it (SO_ORIGINAL_DST), but it can
 * read the namespace's table as text.
 *
 * No entry, or a connection that was not translated (made to the listener itself), is no
 * destination: the proxy refuses it.
 */
import { readFile } from "node:fs/promises";

export interface OriginalDestination {
  ip: string;
  port: number;
}

export async function originalDestination(conntrack: string, peer: { address: string; port: number }, listenerPort: number): Promise<OriginalDestination | undefined> {
  const table = await readFile(conntrack, "utf8");
  const reply = ` src=127.0.0.1 dst=${peer.address} sport=${listenerPort} dport=${peer.port} `;
  for (const line of table.split("\n")) {
    if (!line.includes(" tcp ") || !line.includes(reply)) continue;
    const original = / src=(\S+) dst=(\S+) sport=(\d+) dport=(\d+) /.exec(line);
    if (!original) return undefined;
    const [, source, ip, sport, dport] = original;
    // The source port may differ: when the reply tuple the redirect would make is still taken (an
    // entry of a closed connection lingers), the kernel gives this one another port on its way in.
    if (source !== peer.address || !sport) return undefined;
    if (ip === "127.0.0.1" && Number(dport) === listenerPort) return undefined;
    return { ip: ip!, port: Number(dport) };
  }
  return undefined;
}
