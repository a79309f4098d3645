/**
 * Probing a port from inside the sandbox, where the port is (under isolation a sandbox may have a
 * network of its own): shell commands that poll until the port answers, for a client's waitForPort
 * and for the container's port watch alike. They need bash (for /dev/tcp) and nothing else.
 */

/** A host name or address safe to put in a command line. */
export function isProbeHost(host: string): boolean {
  return /^[A-Za-z0-9.:-]+$/.test(host);
}

/** Returns (exit 0) once `host:port` accepts a TCP connection; polls every `intervalMs`. */
export function tcpProbeCommand(host: string, port: number, intervalMs: number): string {
  return `until (exec 3<>/dev/tcp/${host}/${port}) 2>/dev/null; do sleep ${intervalMs / 1000}; done`;
}

/**
 * Returns (exit 0, printing the status) once `GET path` on `host:port` answers with a status from
 * `min` to `max`; polls every `intervalMs`. `path` must be printable ASCII without spaces.
 */
export function httpProbeCommand(host: string, port: number, path: string, min: number, max: number, intervalMs: number): string {
  const request = `GET ${path} HTTP/1.0\\r\\nHost: ${host}\\r\\nConnection: close\\r\\n\\r\\n`;
  return (
    `while :; do ` +
    `code=$( (exec 3<>/dev/tcp/${host}/${port} && printf '${request.replaceAll("'", "'\\''").replaceAll("%", "%%")}' >&3 && read -r _ c _ <&3 && echo "\${c%%[!0-9]*}") 2>/dev/null ); ` +
    `if [ -n "$code" ] && [ "$code" -ge ${min} ] 2>/dev/null && [ "$code" -le ${max} ]; then echo "$code"; exit 0; fi; ` +
    `sleep ${intervalMs / 1000}; done`
  );
}
