/**
 * The shape of the source tree: no module imports itself back through others (an import cycle, even
 * through types only, means two modules share a type that belongs to neither, or one of them does
 * two jobs), and no source file grows past what one reader takes in at once (700 lines; the
 * interpreter drivers, programs of their own in Python and Node, aside). The imports are read with
 * TypeScript's own scanner, as the compiler reads them.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const MAX_LINES = 700;
/** Programs of their own, run by the code interpreter: each is one file by design. */
const LONG_FILES_ALLOWED = ["container/interpreter/drivers/"];
const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs|py|sh)$/;

/** Every source file under the root, as a path relative to it (dependencies, state and dot folders left out). */
function sourceFiles(dir = ROOT): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name.startsWith(".") || name === "node_modules") return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return SOURCE.test(name) ? [relative(ROOT, path)] : [];
  });
}

/** Each code file's relative imports (type-only ones and requires too) that name a file of the tree. */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files.filter((name) => CODE.test(name))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), "utf8"), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith("."))
      .map((specifier) => relative(ROOT, resolve(ROOT, dirname(file), specifier)))
      .filter((target) => known.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** One cycle per group of modules that import each other (strongly connected components), as the path round it. */
function importCycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || graph.get(node)?.includes(node)) groups.push(group);
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return groups.map((group) => pathRound(graph, group));
}

/** A shortest way from a group's first module back to itself, within the group. */
function pathRound(graph: Map<string, string[]>, group: string[]): string[] {
  const members = new Set(group);
  const start = group.sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = cameFrom.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return group;
}

const files = sourceFiles();

describe("the source tree", () => {
  it("has no import cycle, through values or types", () => {
    expect(importCycles(importGraph(files)).map((cycle) => cycle.join(" → "))).toEqual([]);
  });

  it(`has no source file over ${MAX_LINES} lines`, () => {
    const long = files
      .filter((file) => !LONG_FILES_ALLOWED.some((allowed) => file.startsWith(allowed)))
      .map((file) => ({ file, lines: readFileSync(join(ROOT, file), "utf8").split("\n").length }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it("is read whole: the files the checks see include the Durable Object and the container server", () => {
    expect(files).toContain("src/sandbox/durable-object.ts");
    expect(files).toContain("container/server.ts");
  });
});

describe("the cycle check", () => {
  it("finds a cycle through types as through values, and the way round it", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts", "d.ts"]],
      ["d.ts", []],
    ]);
    expect(importCycles(graph)).toEqual([["a.ts", "b.ts", "c.ts", "a.ts"]]);
    expect(importCycles(new Map([["a.ts", ["b.ts"]], ["b.ts", []]]))).toEqual([]);
  });

  it("reads a type-only import as an import", () => {
    const { importedFiles } = ts.preProcessFile('import type { X } from "./x.ts";\nexport type { Y } from "./y.ts";', true, true);
    expect(importedFiles.map(({ fileName }) => fileName)).toEqual(["./x.ts", "./y.ts"]);
  });
});
