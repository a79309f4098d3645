/**
 * The test name map: chosen host names sent to servers on this machine's loopback, so that tests can
 * exercise allowed, denied and injected traffic without the internet. Only the local runtime reads it
 * (SANDBOX_EGRESS_TEST_HOSTS, or the runtime's `egressTestHosts` option), and nothing else ever lets
 * the proxy reach loopback. Production has no local runtime, so it has no map.
 *
 *   { "hosts": { "api.test": "127.0.0.1", "api.test:443": "127.0.0.1:41234" }, "ca": "<PEM>" }
 *
 * A key is a name, or a name and port (which wins); a value an address, or an address and port (the
 * port asked for, when none). Inside the sandbox a mapped name resolves to an address of its own in
 * 198.18.0.0/15 (set aside for tests), which the proxy reads back as the name. `ca` is trusted for the
 * test servers' TLS certificates, besides the system's.
 */
import { z } from "zod";

export const testHostsSchema = z.strictObject({
  hosts: z.record(z.string().min(1), z.string().regex(/^[0-9a-fA-F.:\[\]]+$/)),
  ca: z.string().optional(),
});
export type TestHosts = z.output<typeof testHostsSchema>;

/** Where mapped names resolve inside a sandbox: the block set aside for network tests. */
const SYNTHETIC_BASE = (198 << 24) | (18 << 16);

export class TestHostMap {
  readonly ca: string | undefined;
  readonly #hosts: Map<string, string>;
  readonly #names: string[];

  constructor(map: TestHosts) {
    this.ca = map.ca;
    this.#hosts = new Map(Object.entries(map.hosts).map(([key, value]) => [key.toLowerCase(), value]));
    this.#names = [...new Set([...this.#hosts.keys()].map((key) => key.replace(/:\d+$/, "")))];
  }

  static fromEnv(value: string | undefined): TestHostMap | undefined {
    if (!value) return undefined;
    return new TestHostMap(testHostsSchema.parse(JSON.parse(value)));
  }

  /** The address a mapped name resolves to inside the sandbox; undefined for a name not in the map. */
  syntheticAddress(name: string): string | undefined {
    const index = this.#names.indexOf(name.toLowerCase());
    if (index < 0) return undefined;
    const value = SYNTHETIC_BASE + index + 1;
    return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".");
  }

  /** Every mapped name's address inside the sandbox. */
  syntheticAddresses(): string[] {
    return this.#names.map((name) => this.syntheticAddress(name)!);
  }

  /** The mapped name behind a synthetic address. */
  nameOf(address: string): string | undefined {
    return this.#names.find((name) => this.syntheticAddress(name) === address);
  }

  /** Where a connection to `name`:`port` goes instead; undefined for a name not in the map. */
  target(name: string, port: number): { host: string; port: number } | undefined {
    const value = this.#hosts.get(`${name.toLowerCase()}:${port}`) ?? this.#hosts.get(name.toLowerCase());
    return value === undefined ? undefined : parseTarget(value, port);
  }
}

/** `1.2.3.4`, `1.2.3.4:80`, `::1` or `[::1]:80`. */
function parseTarget(value: string, port: number): { host: string; port: number } {
  const withPort = /^\[([^\]]+)\](?::(\d+))?$/.exec(value) ?? /^([\d.]+)(?::(\d+))?$/.exec(value);
  if (!withPort) return { host: value, port };
  return { host: withPort[1]!, port: withPort[2] ? Number(withPort[2]) : port };
}
