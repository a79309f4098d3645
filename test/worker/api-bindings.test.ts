/**
 * The method bindings (src/rpc/bindings/) against what the Worker really does: every binding is a
 * served route and a documented operation whose request and answer schemas are the declared ones,
 * and the answers of a running sandbox fit their declared response schemas, with no field the
 * schema does not name (a field added on one side only is drift).
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../../src/api/app.ts";
import { documentedPath } from "../../src/api/openapi-operations.ts";
import { httpRpc } from "../../src/client/http.ts";
import { type Binding, statusOf } from "../../src/rpc/bindings/binding.ts";
import { API_METHODS, SANDBOX_RPC_METHODS } from "../../src/rpc/bindings/index.ts";
import { apiCall, uniqueId } from "./helpers.ts";

type Json = Record<string, unknown>;
const bindings = Object.entries(API_METHODS) as [string, Binding][];
const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;

const jsonSchema = (type: z.ZodType, io: "input" | "output") => {
  const { $schema: _drop, ...json } = z.toJSONSchema(type, { io, unrepresentable: "any" }) as Json;
  return json;
};
/** The whole answer's schema: the declared response, under its key when it has one. */
const answerSchema = (binding: Binding) => (binding.key ? z.object({ [binding.key]: binding.response! }) : binding.response!);

/** Fields of `value` its JSON Schema does not name, as paths. */
function unnamedFields(schema: Json, value: unknown, at = ""): string[] {
  if (Array.isArray(value)) return schema.items ? value.flatMap((item, i) => unnamedFields(schema.items as Json, item, `${at}[${i}]`)) : [];
  if (value === null || typeof value !== "object" || !schema.properties) return [];
  const properties = schema.properties as Record<string, Json>;
  return Object.entries(value).flatMap(([name, field]) => (name in properties ? unnamedFields(properties[name]!, field, `${at}.${name}`) : [`${at}.${name}`]));
}

/** The binding a request was for, by verb and path. */
function bindingFor(method: string, pathname: string): [string, Binding] | undefined {
  const rest = pathname.replace(/^\/v1\/sandboxes\/[^/]+/, "") || "/";
  return bindings.find(([, b]) => b.verb === method && new RegExp(`^${b.path.replace(/:\w+/g, "[^/]+")}$`).test(rest) && !b.byHand?.includes("openapi"));
}

describe("method bindings", () => {
  it("cover every RPC method; the HTTP transport has each one", () => {
    expect(new Set(Object.keys(API_METHODS))).toEqual(new Set(SANDBOX_RPC_METHODS.filter((name) => name in API_METHODS)));
    const rpc = httpRpc("bindings", { url: "http://sandbox.test" }) as unknown as Record<string, unknown>;
    for (const name of SANDBOX_RPC_METHODS) expect(typeof rpc[name], name).toBe("function");
  });

  it("are served and documented with their request and answer schemas", async () => {
    const served = new Set(createApp().routes.map((route) => `${route.method} ${route.path.replace(/\/$/, "")}`));
    const doc = (await (await apiCall("/v1/openapi.json")).json()) as { paths: Record<string, Record<string, Json>> };
    for (const [name, binding] of bindings) {
      expect.soft(served.has(`${binding.verb} /v1/sandboxes/:id${binding.path}`.replace(/\/$/, "")), `${name} served`).toBe(true);
      const operation = doc.paths[documentedPath(binding.path)]?.[binding.verb.toLowerCase()] as Json | undefined;
      expect.soft(operation, `${name} documented`).toBeDefined();
      if (!operation || binding.byHand?.includes("openapi")) continue;
      const requestBody = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      if (binding.body) expect.soft(requestBody?.["application/json"]?.schema, `${name} request`).toEqual(jsonSchema(binding.body, "input"));
      else expect.soft(requestBody, `${name} has no body`).toBeUndefined();
      const answer = (operation.responses as Record<string, Json>)[String(statusOf(binding))];
      if (binding.response) expect.soft((answer?.content as Record<string, Json>)["application/json"]?.schema, `${name} answer`).toEqual(jsonSchema(answerSchema(binding), "output"));
    }
  });

  it("group every documented operation under one of the families' tags", async () => {
    const doc = (await (await apiCall("/v1/openapi.json")).json()) as { tags: { name: string }[]; paths: Record<string, Record<string, Json>> };
    const tags = doc.tags.map((tag) => tag.name);
    expect(tags).toEqual(expect.arrayContaining(["sandbox", "processes", "files", "code", "terminals", "ports", "backups"]));
    const untagged = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([verb]) => verb !== "parameters")
        .filter(([, operation]) => !(operation.tags as string[] | undefined)?.every((tag) => tags.includes(tag)) || (operation.tags as string[]).length === 0)
        .map(([verb]) => `${verb.toUpperCase()} ${path}`),
    );
    expect(untagged).toEqual([]);
  });

  it("describe the answers a running sandbox really gives", async () => {
    const checked = new Set<string>();
    const problems: string[] = [];
    const checkingFetch: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const response = await worker.fetch(request);
      const found = bindingFor(request.method, new URL(request.url).pathname);
      if (!found || !response.ok || !found[1].response || !response.headers.get("content-type")?.includes("application/json")) return response;
      const [name, binding] = found;
      const body = await response.clone().json();
      const result = answerSchema(binding).safeParse(body);
      if (!result.success) problems.push(`${name}: ${result.error.message}`);
      for (const field of unnamedFields(jsonSchema(answerSchema(binding), "output"), body)) problems.push(`${name}: ${field} is not in the schema`);
      checked.add(name);
      return response;
    };
    const rpc = httpRpc(uniqueId("bindings"), { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: checkingFetch });
    const forked = uniqueId("walk-fork");
    try {
      await rpc.exec("echo hi", {});
      const session = await rpc.createSession({ id: "s1", env: { A: "1" } });
      await rpc.getSession(session.id);
      await rpc.listSessions();
      await rpc.setEnvVars({ B: "2" }, { sessionId: session.id });
      const started = await rpc.startProcess("sleep 30", {});
      await rpc.listProcesses({});
      await rpc.getProcessLogs(started.id, {});
      await rpc.killProcess(started.id, "SIGTERM", {});
      await rpc.killAllProcesses({});
      await rpc.cleanupCompletedProcesses();
      await rpc.deleteSession(session.id);
      await rpc.writeFile("dir/a.txt", "hello", {});
      await rpc.readFile("dir/a.txt", {});
      await rpc.mkdir("made", {});
      await rpc.listFiles("dir", {});
      await rpc.exists("dir/a.txt");
      await rpc.checkChanges("dir", {});
      await rpc.renameFile("dir/a.txt", "dir/b.txt", {});
      await rpc.moveFile("dir/b.txt", "made", {});
      await rpc.deleteFile("made/b.txt", {});

      const context = await rpc.createCodeContext({ language: "python" });
      await rpc.listCodeContexts();
      await rpc.getCodeContext(context.id);
      await rpc.runCode("1 + 1", { contextId: context.id });
      await rpc.runCode("import matplotlib.pyplot as plt\nplt.bar(['a'], [1])\nplt.show()", { contextId: context.id }); // a result with a chart
      await rpc.restartCodeContext(context.id);
      await rpc.deleteCodeContext(context.id);

      const terminal = await rpc.createTerminal({ command: "cat" });
      await rpc.listTerminals();
      await rpc.getTerminal(terminal.id);
      await rpc.resizeTerminal(terminal.id, 100, 30);
      await rpc.terminalOutput(terminal.id, {});
      await rpc.interruptTerminal(terminal.id);
      await rpc.killTerminal(terminal.id, "SIGKILL");
      await rpc.waitForTerminal(terminal.id);
      await rpc.deleteTerminal(terminal.id);

      await rpc.exposePort(8123, { name: "web" });
      await rpc.getExposedPorts({});
      await rpc.unexposePort(8123);

      await rpc.status();
      await rpc.info();
      await rpc.getInfo();
      await rpc.getInstructions();
      await rpc.detectIsolation();

      const backup = await rpc.createBackup({ name: "walk", labels: { kind: "walk" }, ttl: 3600 });
      await rpc.listBackups({ label: "kind=walk" });
      await rpc.restoreBackup(backup.id);
      await rpc.fork(forked, {});
      await rpc.deleteBackup(backup.id);

      await rpc.setNetworkPolicy({ default: "allow", rules: [{ action: "deny", cidr: "192.0.2.0/24" }] });
      await rpc.getNetworkPolicy();
      await rpc.setSecret("WALK", "value");
      await rpc.listSecrets();
      await rpc.deleteSecret("WALK");
      await rpc.getNetworkAudit({});
    } finally {
      await rpc.destroy({});
      await httpRpc(forked, { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: (input, init) => worker.fetch(new Request(input, init)) }).destroy({});
    }
    expect(problems).toEqual([]);
    expect(checked.size).toBeGreaterThanOrEqual(52);
  });
});
