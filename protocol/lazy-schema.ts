/**
 * lazySchema: a schema declared here once and built on its first use, then kept.
 *
 * Why: a zod schema is an object with its internals, closures and checks, and the protocol's
 * declarations make some 1,600 of them. Built at load, every container server holds all of them (and the
 * image's startup snapshot carries them twice: in the heap and serialized), although an idle server
 * validates nothing and a busy one uses a few route groups. Declared through this, a schema costs one
 * small stand-in until something reads it; validation is the same schema, built the same way.
 *
 * The stand-in is a Proxy over the built schema: it has the schema's type, so `z.infer`, `.extend`,
 * `.shape` and composition read as before, and a schema built from others holds their stand-ins (built
 * in turn when it first reads them). What zod keeps by object (its metadata registry, what its JSON
 * Schema generator has made of each schema) sees the stand-in as a schema of its own that refers to
 * the built one, so JSON Schema made from it is the built schema's.
 */
import * as z from "zod";
// By name from zod's core (not `z.core`, which would bring the whole of its core into the bundle).
import { processSchema } from "zod/v4/core";

type Internals = z.ZodType["_zod"];

/** What a stand-in stands over: how to build its schema, the schema once built, and its internals as the stand-in's. */
interface Pending {
  build: () => z.ZodType;
  built?: z.ZodType;
  internals?: Internals;
  standIn?: z.ZodType;
}

function built(pending: Pending): z.ZodType {
  if (pending.built === undefined) {
    const schema = (pending.built = pending.build());
    const meta = z.globalRegistry.get(schema);
    if (meta) z.globalRegistry.add(pending.standIn!, meta);
  }
  return pending.built;
}

/**
 * The built schema's internals, as the stand-in's: the same, except for JSON Schema. zod's generator
 * keeps what it made of each schema by the object it was given (the stand-in), while the built
 * schema's own JSON Schema step looks itself up: so the stand-in's step makes the built schema's and
 * refers to it, as zod's own `z.lazy` does.
 */
function internals(pending: Pending): Internals {
  if (pending.internals === undefined) {
    const schema = built(pending);
    const processJSONSchema: Internals["processJSONSchema"] = (context, _json, params) => {
      processSchema(schema, context, params);
      context.seen.get(pending.standIn!)!.ref = schema;
    };
    pending.internals = Object.create(schema._zod, { processJSONSchema: { value: processJSONSchema } }) as Internals;
  }
  return pending.internals;
}

/**
 * One handler for every stand-in: getters run on the built schema itself, and methods called on the
 * stand-in read the schema through it. Descriptors are reported configurable, since the stand-in's own
 * target does not hold the built schema's fixed properties.
 */
const STAND_IN: ProxyHandler<Pending> = {
  get: (pending, key) => (key === "_zod" ? internals(pending) : Reflect.get(built(pending), key)),
  has: (pending, key) => Reflect.has(built(pending), key),
  set: (pending, key, value) => Reflect.set(built(pending), key, value),
  ownKeys: (pending) => Reflect.ownKeys(built(pending)),
  getOwnPropertyDescriptor: (pending, key) => {
    const descriptor = Reflect.getOwnPropertyDescriptor(built(pending), key);
    return descriptor && { ...descriptor, configurable: true };
  },
  defineProperty: (pending, key, descriptor) => Reflect.defineProperty(built(pending), key, descriptor),
  deleteProperty: (pending, key) => Reflect.deleteProperty(built(pending), key),
  getPrototypeOf: (pending) => Reflect.getPrototypeOf(built(pending)),
};

export function lazySchema<S extends z.ZodType>(build: () => S): S {
  const pending: Pending = { build };
  pending.standIn = new Proxy(pending, STAND_IN) as unknown as z.ZodType;
  return pending.standIn as S;
}
