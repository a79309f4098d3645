/**
 * What the proxy knows of a connection before its first request is read (where it was going, the
 * TLS name it asked for): what every request on it is judged with.
 */
import type { OriginalDestination } from "./original-destination.ts";

export interface FlowContext {
  destination: OriginalDestination;
  /** The TLS server name the client asked for (or the address, without one): requests must name the same host. */
  serverName?: string;
  /**
   * The Worker passed this plain connection by for the host its first request named (workerd-interception.ts):
   * every request on it must name that host, so none reaches, through the proxy, a host the Worker intercepts.
   */
  passedFor?: { host: string | undefined };
}
