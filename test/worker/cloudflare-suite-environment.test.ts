/**
 * Cloudflare's environment-variable cases (their environment workflow), ported to getSandbox: the
 * image's ENV, setEnvVars for the sandbox, per-command env in exec and execStream, which one wins,
 * null as unset, and commands that read stdin.
 */
import { afterAll, describe, expect, it } from "vitest";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

/** Cloudflare's per-command env takes `null` for "leave this one out". */
type NullableEnv = Record<string, string>;

describe("environment variables", () => {
  const sandbox = sandboxes.create("cf-env");

  // Theirs reads the image's WORKSPACE; ours keeps the variables its server reads (WORKSPACE among
  // them) to the server (docs/cloudflare-compatibility.md), so an image variable of ours stands in.
  it("has the image's ENV in commands", async () => {
    const result = await sandbox.exec('echo "$DEBIAN_FRONTEND"');
    expect(result.success).toBe(true);
    expect(result.stdout.trim()).toBe("noninteractive");
  });

  it("sets env vars that later commands see (setEnvVars)", async () => {
    await sandbox.setEnvVars({ MY_SESSION_VAR: "session-value", ANOTHER_VAR: "another-value" });
    expect((await sandbox.exec('echo "$MY_SESSION_VAR:$ANOTHER_VAR"')).stdout.trim()).toBe("session-value:another-value");
  });

  it("takes per-command env in exec()", async () => {
    expect((await sandbox.exec('echo "$CMD_VAR"', { env: { CMD_VAR: "command-specific-value" } })).stdout.trim()).toBe("command-specific-value");
  });

  it("takes per-command env in execStream()", async () => {
    let stdout = "";
    for await (const event of sandbox.execStream('echo "$STREAM_VAR"', { env: { STREAM_VAR: "stream-env-value" } })) {
      if (event.type === "stdout") stdout += event.data;
    }
    expect(stdout.trim()).toBe("stream-env-value");
  });

  it("per-command env wins over setEnvVars, for that command only", async () => {
    await sandbox.setEnvVars({ OVERRIDE_TEST: "session-level" });
    expect((await sandbox.exec('echo "$OVERRIDE_TEST"')).stdout.trim()).toBe("session-level");
    expect((await sandbox.exec('echo "$OVERRIDE_TEST"', { env: { OVERRIDE_TEST: "command-level" } })).stdout.trim()).toBe("command-level");
    expect((await sandbox.exec('echo "$OVERRIDE_TEST"')).stdout.trim()).toBe("session-level");
  });

  it("setEnvVars wins over the image's ENV", async () => {
    const session = await sandbox.createSession();
    expect((await session.exec('echo "$DEBIAN_FRONTEND"')).stdout.trim()).toBe("noninteractive");
    await session.setEnvVars({ DEBIAN_FRONTEND: "overridden-version" });
    expect((await session.exec('echo "$DEBIAN_FRONTEND"')).stdout.trim()).toBe("overridden-version");
  });

  it("runs commands that read stdin without hanging", async () => {
    expect(await sandbox.exec("cat")).toMatchObject({ success: true, stdout: "" });
    const read = await sandbox.exec('read -t 1 INPUT_VAR || echo "read returned"');
    expect(read.success).toBe(true);
    expect(read.stdout).toContain("read returned");
    expect((await sandbox.exec('grep "test" || true')).success).toBe(true);
  });

  it("treats null in setEnvVars as unset", async () => {
    await sandbox.setEnvVars({ UNSET_DEFINED: "test-value", UNSET_NULL: null, UNSET_EMPTY: "" });
    expect((await sandbox.exec("echo $UNSET_DEFINED")).stdout.trim()).toBe("test-value");
    expect((await sandbox.exec('printenv UNSET_NULL || echo "not set"')).stdout.trim()).toBe("not set");
    expect((await sandbox.exec('echo "[$UNSET_EMPTY]"')).stdout.trim()).toBe("[]");
  });

  it("unsets a variable set before when given null", async () => {
    await sandbox.setEnvVars({ TO_REMOVE: "initial-value" });
    expect((await sandbox.exec("echo $TO_REMOVE")).stdout.trim()).toBe("initial-value");
    await sandbox.setEnvVars({ TO_REMOVE: null });
    expect((await sandbox.exec('printenv TO_REMOVE || echo "not set"')).stdout.trim()).toBe("not set");
  });

  it("leaves out null entries of a command's env", async () => {
    const env = { CMD_VALID: "valid-value", CMD_INVALID: null } as unknown as NullableEnv;
    expect((await sandbox.exec("echo $CMD_VALID", { env })).stdout.trim()).toBe("valid-value");
    expect((await sandbox.exec('printenv CMD_INVALID || echo "not set"', { env })).stdout.trim()).toBe("not set");
  });
});
