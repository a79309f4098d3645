/**
 * Schemas built on first use (protocol/lazy-schema.ts): loading the contract, or the whole container
 * server, builds none (counted in a Node process of its own, by the `_zod` every zod schema is given
 * as it is made), and a schema's stand-in validates, composes and describes itself as the schema does.
 */
import { spawnSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as z from "zod";
import { describe, expect, it } from "vitest";
import { lazySchema } from "../../protocol/lazy-schema.ts";
import { execRequestSchema } from "../../protocol/process.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Counts the zod schemas made while `modules` load, in a Node process of its own. */
function schemasBuiltLoading(modules: string[]): number {
  const counter = [
    "const define = Object.defineProperty; globalThis.__schemas = 0;",
    'Object.defineProperty = function (o, key, d) { if (key === "_zod") globalThis.__schemas++; return define(o, key, d); };',
  ].join("\n");
  const program = `${modules.map((module) => `await import(${JSON.stringify(resolve(ROOT, module))});`).join(" ")} console.log(globalThis.__schemas);`;
  const run = spawnSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(counter)}`, "--input-type=module", "-e", program], {
    cwd: ROOT,
    encoding: "utf8",
  });
  expect(run.stderr).not.toMatch(/Error/);
  return Number(run.stdout.trim());
}

describe("schemas built on first use", () => {
  it("loading the contract builds no schema", () => {
    expect(schemasBuiltLoading(["protocol/index.ts"])).toBe(0);
  });

  it("loading the container server (every route group) builds no schema", () => {
    expect(schemasBuiltLoading(["container/server.ts"])).toBe(0);
  });

  it("a schema is built once, when first read, and validates as itself", () => {
    let builds = 0;
    const strictThing = lazySchema(() => {
      builds++;
      return z.strictObject({ name: z.string().min(1) });
    });
    expect(builds).toBe(0);
    expect(strictThing.safeParse({ name: "a" }).success).toBe(true);
    expect(strictThing.safeParse({ name: "" }).success).toBe(false);
    expect(strictThing.safeParse({ name: "a", extra: 1 }).success).toBe(false);
    expect(builds).toBe(1);
    expect(strictThing instanceof z.ZodObject).toBe(true);
    expect(Object.keys(strictThing.shape)).toEqual(["name"]);
  });

  it("a schema made of stand-ins validates what they validate, and derived ones too", () => {
    const name = lazySchema(() => z.string().min(1));
    const outer = lazySchema(() => z.object({ name, tags: z.array(name).optional() }).strict());
    expect(outer.parse({ name: "a", tags: ["b"] })).toEqual({ name: "a", tags: ["b"] });
    expect(outer.safeParse({ name: "a", tags: [""] }).success).toBe(false);
    expect(outer.safeParse({ name: "a", other: 1 }).success).toBe(false);
    const extended = outer.extend({ size: z.number() });
    expect(extended.safeParse({ name: "a", size: 1 }).success).toBe(true);
    expect(extended.safeParse({ name: "a" }).success).toBe(false);
  });

  it("a stand-in's JSON Schema is its schema's, whatever the schema is made of", () => {
    const shapes: (() => z.ZodType)[] = [
      () => z.string().min(1).describe("a name"),
      () => z.string().transform((value) => value.length),
      () => z.number().int().default(3),
      () => z.object({ a: z.string().optional(), b: z.array(z.number()) }).strict().describe("a thing"),
      () => z.discriminatedUnion("type", [z.object({ type: z.literal("a") }), z.object({ type: z.literal("b"), n: z.number() })]),
    ];
    for (const shape of shapes) {
      for (const io of ["input", "output"] as const) {
        expect(z.toJSONSchema(lazySchema(shape), { io, unrepresentable: "any" })).toEqual(z.toJSONSchema(shape(), { io, unrepresentable: "any" }));
        const holder = (field: z.ZodType) => z.object({ field, again: field.optional() });
        expect(z.toJSONSchema(holder(lazySchema(shape)), { io, unrepresentable: "any" })).toEqual(z.toJSONSchema(holder(shape()), { io, unrepresentable: "any" }));
      }
    }
  });

  it("a stand-in's JSON Schema keeps its description, alone and as a field", () => {
    const described = lazySchema(() => z.string().describe("what it is"));
    expect(z.toJSONSchema(described)).toMatchObject({ type: "string", description: "what it is" });
    const holder = z.object({ field: described });
    expect(z.toJSONSchema(holder)).toMatchObject({ properties: { field: { type: "string", description: "what it is" } } });
  });

  it("a request of the contract is still refused for what it should not carry", () => {
    expect(execRequestSchema.safeParse({ command: "echo hi" }).success).toBe(true);
    expect(execRequestSchema.safeParse({ command: "echo\0hi" }).success).toBe(false);
    expect(execRequestSchema.safeParse({ command: 1 }).success).toBe(false);
  });
});
