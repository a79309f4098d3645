/** Signal numbers the PTY library reports, as the names the wire uses. */
import { SIGNALS } from "../../protocol/process.ts";

export function signalName(signal: number): string {
  return Object.entries(SIGNALS).find(([, num]) => num === signal)?.[0] ?? `SIG${signal}`;
}
