/**
 * deepagents' own tools on an EdgeDeepAgentsSandbox: the methods BaseSandbox derives from the
 * backend primitives (ls, read, write, edit, grep, glob), and the agent tools the filesystem
 * middleware builds on them, called directly as an agent's tool calls would run them (no model).
 */
import { createFilesystemMiddleware } from "deepagents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EdgeDeepAgentsSandbox } from "../../src/adapters/deepagents/index.ts";
import { httpConnection } from "./helpers.ts";

let sandbox: EdgeDeepAgentsSandbox;
let root: string;
beforeAll(async () => {
  sandbox = await EdgeDeepAgentsSandbox.create({
    ...httpConnection("deep-tools"),
    initialFiles: {
      "src/app.py": "def main():\n    print('hello')\n",
      "src/util/helpers.py": "def helper():\n    return 42\n",
      "README.md": "# Project\nhello world\n",
    },
  });
  root = sandbox.workspace!;
});
afterAll(() => sandbox.close());

describe("BaseSandbox methods over the sandbox", () => {
  it("ls lists a directory with sizes, directories marked", async () => {
    const { files, error } = await sandbox.ls(root);
    expect(error).toBeUndefined();
    const byPath = Object.fromEntries((files ?? []).map((f) => [f.path, f]));
    expect(byPath[`${root}/README.md`]).toMatchObject({ is_dir: false, size: 22 });
    expect(byPath[`${root}/src/`]).toMatchObject({ is_dir: true });
  });

  it("read returns numbered lines, paginated", async () => {
    const whole = await sandbox.read(`${root}/src/app.py`);
    expect(whole.content).toBe("     1\tdef main():\n     2\t    print('hello')\n");
    const second = await sandbox.read(`${root}/src/app.py`, 1, 1);
    expect(second).toMatchObject({ content: "     2\t    print('hello')\n", startLine: 2, endLine: 2 });
    expect((await sandbox.read(`${root}/nope.py`)).error).toMatch(/not found/);
  });

  it("write creates files (parents included) and edit replaces text", async () => {
    expect(await sandbox.write(`${root}/new/dir/notes.txt`, "alpha beta alpha\n")).toMatchObject({ path: `${root}/new/dir/notes.txt` });
    expect(await sandbox.edit(`${root}/new/dir/notes.txt`, "beta", "gamma")).toMatchObject({ occurrences: 1 });
    expect((await sandbox.edit(`${root}/new/dir/notes.txt`, "alpha", "omega")).error).toMatch(/Multiple occurrences/);
    expect(await sandbox.edit(`${root}/new/dir/notes.txt`, "alpha", "omega", true)).toMatchObject({ occurrences: 2 });
    expect((await sandbox.execute("cat new/dir/notes.txt")).output).toBe("omega gamma omega\n");
  });

  it("grep finds literal text, optionally within a glob", async () => {
    const { matches } = await sandbox.grep("hello", root);
    expect(matches?.map((m) => [m.path.slice(root.length), m.line]).sort()).toEqual([
      ["/README.md", 2],
      ["/src/app.py", 2],
    ]);
    const onlyPython = await sandbox.grep("hello", root, "*.py");
    expect(onlyPython.matches?.map((m) => m.path)).toEqual([`${root}/src/app.py`]);
  });

  it("glob matches paths below a base", async () => {
    const { files } = await sandbox.glob("**/*.py", root);
    expect(files?.map((f) => f.path).sort()).toEqual(["src/app.py", "src/util/helpers.py"]);
    expect((await sandbox.glob("*.md", root)).files?.map((f) => f.path)).toEqual(["README.md"]);
  });
});

describe("the filesystem middleware's tools", () => {
  type Tool = { name: string; invoke(input: Record<string, unknown>, config?: Record<string, unknown>): Promise<unknown> };
  let tools: Map<string, Tool>;
  beforeAll(() => {
    const middleware = createFilesystemMiddleware({ backend: sandbox }) as unknown as { tools: Tool[] };
    tools = new Map(middleware.tools.map((tool) => [tool.name, tool]));
  });

  async function call(name: string, input: Record<string, unknown>): Promise<string> {
    const result = await tools.get(name)!.invoke(input, { toolCall: { id: `call-${name}` } });
    const content = (result as { content?: unknown }).content ?? result;
    return typeof content === "string" ? content : JSON.stringify(content);
  }

  it("offers ls, read_file, write_file, edit_file, glob, grep and execute", () => {
    expect([...tools.keys()]).toEqual(expect.arrayContaining(["ls", "read_file", "write_file", "edit_file", "glob", "grep", "execute"]));
  });

  it("run against the sandbox", async () => {
    expect(await call("write_file", { file_path: `${root}/tool.py`, content: "x = 1\n" })).toBe(`Successfully wrote to '${root}/tool.py'`);
    expect(await call("edit_file", { file_path: `${root}/tool.py`, old_string: "1", new_string: "2" })).toMatch(/Successfully replaced 1/);
    expect(await call("read_file", { file_path: `${root}/tool.py` })).toContain("1\\tx = 2");
    expect(await call("ls", { path: root })).toContain(`${root}/tool.py`);
    expect(await call("glob", { pattern: "*.py", path: root })).toBe("tool.py");
    expect(await call("grep", { pattern: "x = 2", path: root })).toContain(`${root}/tool.py`);
    expect(await call("execute", { command: "python3 tool.py && echo ran; exit 7" })).toBe("ran\n\n[Command failed with exit code 7]");
  });
});
