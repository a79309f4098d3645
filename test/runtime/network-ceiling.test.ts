/**
 * The operator's network ceiling (SANDBOX_NETWORK_ALLOWED=0): no sandbox may ask for outbound
 * network, neither when its config is checked nor when it starts, and the runtime's own default
 * cannot hand it out either.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ISOLATION_ENV } from "../../protocol/isolation.ts";
import { resolveIsolation } from "../../runtime/isolation.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { runtimeSettingsFromEnv } from "../../runtime/settings.ts";
import { call, runtimeCall, tempDataDir, type DataDir } from "./helpers.ts";

let dataDir: DataDir;
let runtime: RunningRuntime;
beforeAll(async () => {
  dataDir = tempDataDir();
  runtime = await startRuntime({ dataDir: dataDir.path, isolation: "none", networkAllowed: false, stopGraceMs: 2_000 });
});
afterAll(async () => {
  await runtime.close();
  dataDir.remove();
});

const api = (method: string, path: string, body?: unknown) => runtimeCall(runtime, method, path, body);

describe("the operator's network ceiling", () => {
  it("is read from SANDBOX_NETWORK_ALLOWED, 1 or 0 only", () => {
    expect(runtimeSettingsFromEnv({ SANDBOX_NETWORK_ALLOWED: "0" }).networkAllowed).toBe(false);
    expect(runtimeSettingsFromEnv({ SANDBOX_NETWORK_ALLOWED: "1" }).networkAllowed).toBe(true);
    expect(runtimeSettingsFromEnv({}).networkAllowed).toBeUndefined();
    expect(() => runtimeSettingsFromEnv({ SANDBOX_NETWORK_ALLOWED: "yes" })).toThrow(/SANDBOX_NETWORK_ALLOWED must be 1 or 0/);
  });

  it("refuses a config asking for network, and says so in health", async () => {
    expect((await api("GET", "/health")).body).toMatchObject({ networkAllowed: false });
    expect(await api("POST", "/isolation/check", { allowNetwork: true })).toMatchObject({
      status: 403,
      body: { code: "ISOLATION_NOT_ALLOWED", context: { field: "allowNetwork" } },
    });
    expect((await api("POST", "/isolation/check", { allowNetwork: false })).status).toBe(200);
  });

  it("refuses a start asking for network", async () => {
    const started = await api("POST", "/containers/ceiling-one/start", { isolation: { allowNetwork: true } });
    expect(started).toMatchObject({ status: 403, body: { code: "ISOLATION_NOT_ALLOWED" } });
    expect((await api("GET", "/containers/ceiling-one")).body).toMatchObject({ running: false });
  });

  it("turns the network off even where the runtime's default would give it", async () => {
    const resolved = resolveIsolation({ mode: "bwrap", networkAllowed: false, env: { [ISOLATION_ENV.allowNetwork]: "1" } });
    expect(resolved.env[ISOLATION_ENV.allowNetwork]).toBe("0");
    expect(resolved.env[ISOLATION_ENV.enableInternet]).toBe("0");

  });
});
