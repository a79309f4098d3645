/**
 * What one sandbox may spend of the runtime through its egress proxy, declared once. The proxy runs
 * in the runtime's own process, beside every other sandbox's: without these, a sandbox holding
 * thousands of connections, or reading none of what it asked for, would spend the runtime's memory
 * until it died, and every sandbox with it.
 */
export const PROXY_LIMITS = {
  /**
   * Connections a sandbox may hold open through the proxy at once. Package managers and browsers
   * open tens; a connection past this is reset at once ("connection reset") and audited.
   */
  connectionsPerSandbox: 256,
  /**
   * Bytes one connection may hold in the proxy, read from one side and not yet taken by the other,
   * before it stops reading: a download reaches the sandbox in large writes (inbound.ts).
   */
  bufferedPerConnection: 1024 * 1024,
  /** The same, for all of one sandbox's connections together: past it, each of them holds no more than `bufferedWhenOver`. */
  bufferedPerSandbox: 32 * 1024 * 1024,
  /** The same, for every sandbox of the runtime together: past it, every connection holds no more than `bufferedWhenOver`, and reads that much at a time. */
  bufferedTotal: 256 * 1024 * 1024,
  /** What one connection may hold, and read at once, while its sandbox or the runtime is past its share. */
  bufferedWhenOver: 64 * 1024,
} as const;
