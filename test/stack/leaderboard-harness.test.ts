/**
 * ComputeSDK's public sandbox benchmark, as it runs its Cloudflare participant: `@computesdk/cloudflare`
 * configured with `{sandboxUrl, sandboxSecret}`, one iteration being create → `node -v` → destroy,
 * against our Worker unchanged. Every iteration must get a sandbox of its own (the harness checks that
 * nothing is reused: here by a marker in the workspace, as this stack runs sandboxes without a
 * container of their own), and a wrong secret must fail the create, not half-make a sandbox.
 */
import { cloudflare } from "@computesdk/cloudflare";
import { describe, expect, inject, it } from "vitest";

const harness = (secret: string) => cloudflare({ sandboxUrl: inject("stackUrl"), sandboxSecret: secret });

describe("the leaderboard's Cloudflare participant against our Worker", () => {
  it("runs its iteration: create, first node -v, destroy; each sandbox a fresh one", async () => {
    const compute = harness(inject("stackToken"));
    const seen = new Set<string>();
    for (let i = 0; i < 2; i++) {
      const sandbox = await compute.sandbox.create();
      const marker = await sandbox.runCommand("test -e .bench_marker && echo reused; echo $$ > .bench_marker");
      expect(marker).toMatchObject({ exitCode: 0, stdout: "" });
      const node = await sandbox.runCommand("node -v");
      expect(node.exitCode).toBe(0);
      expect(node.stdout).toMatch(/^v\d+\./);
      seen.add(sandbox.sandboxId);
      await sandbox.destroy();
    }
    expect(seen.size).toBe(2);
  });

  it("fails the create with a wrong secret", async () => {
    await expect(harness("not-the-token").sandbox.create()).rejects.toThrow(/401/);
  });
});
