/**
 * Cloudflare's container instance types, as the platform's limits page lists them: what each gives a
 * container. Declared once here: wrangler.toml names one, `npm run test:image` runs the image's server
 * under its memory (the proof that the server, a Python cell and a burst of commands fit), the bench
 * reports against it, and `npm run deploy` refuses a name that is not one of them.
 */

export interface InstanceType {
  /** vCPUs (a fraction for the small types). */
  vcpu: number;
  memoryBytes: number;
  diskBytes: number;
}

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;
const GB = 1000 ** 3;

export const INSTANCE_TYPES = {
  lite: { vcpu: 1 / 16, memoryBytes: 256 * MIB, diskBytes: 2 * GB },
  basic: { vcpu: 1 / 4, memoryBytes: 1 * GIB, diskBytes: 4 * GB },
  "standard-1": { vcpu: 1 / 2, memoryBytes: 4 * GIB, diskBytes: 8 * GB },
  "standard-2": { vcpu: 1, memoryBytes: 6 * GIB, diskBytes: 12 * GB },
  "standard-3": { vcpu: 2, memoryBytes: 8 * GIB, diskBytes: 16 * GB },
  "standard-4": { vcpu: 4, memoryBytes: 12 * GIB, diskBytes: 20 * GB },
} as const satisfies Record<string, InstanceType>;

export type InstanceTypeName = keyof typeof INSTANCE_TYPES;

/** What the platform runs when wrangler.toml names no type (wrangler's default, formerly "dev"). */
export const DEFAULT_INSTANCE_TYPE: InstanceTypeName = "lite";

export function isInstanceTypeName(name: string): name is InstanceTypeName {
  return Object.hasOwn(INSTANCE_TYPES, name);
}

/** "basic (1/4 vCPU, 1 GiB, 4 GB disk)". */
export function describeInstanceType(name: InstanceTypeName): string {
  const type: InstanceType = INSTANCE_TYPES[name];
  const vcpu = type.vcpu < 1 ? `1/${Math.round(1 / type.vcpu)}` : String(type.vcpu);
  const memory = type.memoryBytes < GIB ? `${type.memoryBytes / MIB} MiB` : `${type.memoryBytes / GIB} GiB`;
  return `${name} (${vcpu} vCPU, ${memory}, ${type.diskBytes / GB} GB disk)`;
}
