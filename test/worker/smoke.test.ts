import { env } from "cloudflare:workers";
import { it, expect } from "vitest";
import { getSandbox } from "../../src/client/get-sandbox.ts";

it("runs a command through the Durable Object", async () => {
  const sandbox = getSandbox(env.Sandbox, "smoke-1");
  const result = await sandbox.exec("echo hello; pwd");
  console.log(result);
  expect(result.stdout).toContain("hello");
});
