/**
 * The names of the environment variables a container server reads as it boots, in a module that
 * imports nothing: the server's first process (which only scrubs its environment and re-executes
 * itself, container/main.ts) reads them without loading zod, which would add tens of milliseconds of
 * CPU to every container's start. runtime.ts and isolation.ts, where they belong, re-export them.
 */

/**
 * Set to "1" on a container server the runtime starts: the server reads its secret from stdin (never
 * from its environment or argv, which other processes of the machine can read) and answers only to it.
 */
export const SECRET_FROM_STDIN_VAR = "SANDBOX_SECRET_FROM_STDIN";

/**
 * The secret a container server answers to, as its Durable Object gives it to every start of its
 * container (in the container's environment: the one way in that `ctx.container.start` has). The local
 * runtime's Docker engine takes it out of the environment and hands it to the server on stdin; on
 * Cloudflare the server reads it here.
 */
export const ENGINE_SERVER_SECRET_VAR = "SANDBOX_ENGINE_SERVER_SECRET";

/**
 * Set to "1" on a container server the runtime starts before it knows its sandbox (a warm server, and
 * every start of the default launcher): the server boots, then reads a `ServerAssignment` from stdin
 * and only then takes its settings and listens. What a sandbox is given never enters the server's
 * environment as it was exec'd, so no command can read it in /proc/<server pid>/environ.
 */
export const ASSIGNMENT_FROM_STDIN_VAR = "SANDBOX_ASSIGNMENT_FROM_STDIN";

/**
 * Set to "1" on such a server that waits in the runtime's warm pool: until it is told its sandbox it
 * rehearses a sandbox's first requests (container/boot/rehearsal.ts). A server started for a sandbox
 * that is told it at once does not: it would only delay its start.
 */
export const REHEARSE_VAR = "SANDBOX_REHEARSE";

/**
 * The environment variable carrying a run's tag. The runtime starts each container server with its
 * run's id in it; the server gives each command `<that id>/<n>`, which all the command starts
 * inherits. So the runtime finds everything of a run (also one a previous runtime left running), and
 * the server what one command left outside its process group. The one variable of the server's that
 * commands see.
 */
export const RUN_TAG_VAR = "SANDBOX_RUN_TAG";

/**
 * Set to "1" where the environment a server is started with is its image's (the image's start script
 * sets it; the local runtime sets it beside the image's ENV): every command starts from those
 * variables, less the server's own (container/boot/server-env.ts). Unset (a server started from a
 * shell, a test), the server keeps only what it reads and commands see none of the rest.
 */
export const IMAGE_ENV_VAR = "SANDBOX_IMAGE_ENV";

/** The variable naming that descriptor (SERVER_LISTEN_FD in runtime.ts). */
export const LISTEN_FD_VAR = "SANDBOX_LISTEN_FD";

/** Native isolation of commands (isolation.ts). */
export const ISOLATION_ENV = {
  /** "none" or "bwrap" (the local runtime's default where bubblewrap runs). */
  mode: "SANDBOX_ISOLATION",
  /** "1"/"true" lets commands use the network; default off. SANDBOX_ENABLE_INTERNET is read when unset. */
  allowNetwork: "SANDBOX_ALLOW_NETWORK",
  enableInternet: "SANDBOX_ENABLE_INTERNET",
  readOnlyPaths: "SANDBOX_READ_ONLY_PATHS",
  readWritePaths: "SANDBOX_READ_WRITE_PATHS",
  /** "0"/"false" hides /usr, /bin, /lib*, /etc (default: visible read-only, so programs run). */
  allowSystemBinaries: "SANDBOX_ALLOW_SYSTEM_BINARIES",
  /** Extra bwrap arguments, a JSON array. */
  bwrapArgs: "SANDBOX_BWRAP_ARGS",
  /**
   * Set by the local runtime on a server it starts inside a sandbox's container: the walls that
   * container puts around the server and every command (IsolationInEffect as JSON). Such a server
   * runs its commands as they are, as a server in a production container does, and reports these.
   */
  containerWalls: "SANDBOX_CONTAINER_WALLS",
} as const;

/**
 * Set on a container server whose sandbox's TLS goes through an intercepting proxy: the trust bundle
 * (the system's authorities and the proxy's) that commands are pointed at (network.ts).
 */
export const CA_BUNDLE_VAR = "SANDBOX_CA_BUNDLE";
