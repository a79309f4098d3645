/**
 * workerd's egress listener, as a sandbox's sidecar was told of it (`PUT /egress`,
 * ../docker-engine/sidecar.ts): where it listens, the names its interceptions cover (the
 * `interceptOutboundHttp(s)` hosts, or `*` once any mapping is by address), and the container's
 * internet switch (`enableInternet`). A sandbox whose container workerd runs asks workerd first about
 * each connection (workerd-interception.ts); what workerd does not claim follows that switch and the
 * runtime's own policy.
 *
 * A name an interception covers resolves inside the sandbox even where it has no address (or the
 * internet is off): to PLACEHOLDER_ADDRESS, which leads only to the Worker. The proxy never dials it.
 */

/** The rule the audit trail names for a connection the Worker's outbound handler took. */
export const WORKER_RULE = "worker";

/** The rule the audit trail names for what the container's internet switch refused. */
export const INTERNET_RULE = "internet";

/**
 * Where a name only an interception covers resolves: an address of the block set aside for network
 * tests (198.18.0.0/15, never routed), at its top, away from the test name map's from its bottom.
 */
export const PLACEHOLDER_ADDRESS = "198.19.255.254";

export interface WorkerdEgressSettings {
  /** workerd's egress listener (the bridge network's gateway, and the port workerd put). */
  host: string;
  port: number;
  /** Name patterns its interceptions cover (`*` any run of characters); `*` alone covers every name. */
  allowHostnames: readonly string[];
  /** The container's `enableInternet`: whether what no interception claims may leave. */
  internetEnabled: boolean;
}

export class WorkerdEgress implements WorkerdEgressSettings {
  readonly host: string;
  readonly port: number;
  readonly allowHostnames: readonly string[];
  readonly internetEnabled: boolean;
  readonly #patterns: RegExp[];

  constructor(settings: WorkerdEgressSettings) {
    this.host = settings.host;
    this.port = settings.port;
    this.allowHostnames = settings.allowHostnames;
    this.internetEnabled = settings.internetEnabled;
    this.#patterns = settings.allowHostnames.map(globPattern);
  }

  /** Whether an interception could claim a connection to `name` (or, without one, any connection at all). */
  mayClaim(name: string | undefined): boolean {
    if (this.allowHostnames.includes("*")) return true;
    return name !== undefined && this.covers(name);
  }

  /** Whether an interception's name pattern covers `name`. */
  covers(name: string): boolean {
    const bare = name.toLowerCase().replace(/\.$/, "");
    return this.#patterns.some((pattern) => pattern.test(bare));
  }
}

/** A pattern as workerd matches interception hosts: `*` stands for any run of characters, dots too. */
function globPattern(glob: string): RegExp {
  const text = glob.trim().toLowerCase().replace(/\.$/, "");
  return new RegExp(`^${text.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
}
