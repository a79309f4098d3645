import { defineConfig } from "vitest/config";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { fileURLToPath } from "node:url";

/** API token the workers tests run with (the Worker refuses every request without one). */
export const TEST_API_TOKEN = "test-token-0123456789";
/** Preview domain of the workers tests: host-based preview URLs are `<port>-<id>.preview.test`. */
export const TEST_PREVIEW_DOMAIN = "preview.test";
/** The origin of path-based preview URLs in the workers tests (for ids that cannot be host names). */
export const TEST_PREVIEW_PATH_ORIGIN = "http://paths.test";

export default defineConfig({
  test: {
    // workerd's local container client (the workers project's Durable Objects) rejects a promise of its own,
    // beside the one monitor() returned, when a start that monitor() watches fails: the Durable Object gets
    // that failure through monitor() and answers it with a code, which the tests of refused starts check.
    // Only that echo is let pass.
    onUnhandledError: (error) => !(error.name === "Error" && error.message === "Container failed to start"),
    projects: [
      {
        // Cloudflare's Sandbox SDK (whose route clients drive our server in cloudflare-sdk.test.ts) imports
        // `cloudflare:workers`; in Node a small stand-in answers for it.
        resolve: { alias: { "cloudflare:workers": fileURLToPath(new URL("./test/container/cloudflare-workers.ts", import.meta.url)) } },
        test: {
          name: "container",
          environment: "node",
          include: ["test/container/**/*.test.ts"],
          server: { deps: { inline: ["@cloudflare/sandbox", "@cloudflare/containers"] } },
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        // Pure code of the contract (protocol/) and of the RPC layer's stream reader (src/rpc/), in Node
        // with no server of ours: the stream reader's tests bring their own HTTP server. Also the source
        // tree's shape (test/source/: import cycles, file sizes).
        test: {
          name: "unit",
          environment: "node",
          include: ["test/protocol/**/*.test.ts", "test/rpc/**/*.test.ts", "test/source/**/*.test.ts"],
          // Pure CPU work (thousands of cuts of a stream, the whole import graph): beside other suites on
          // a busy machine it takes several times what it takes alone.
          testTimeout: 30_000,
        },
      },
      {
        // The project's own scripts (scripts/): the OS package checker.
        test: {
          name: "scripts",
          environment: "node",
          include: ["test/scripts/**/*.test.ts"],
          testTimeout: 30_000,
        },
      },
      {
        // The local container runtime (runtime/) on its own, with real container servers.
        test: {
          name: "runtime",
          environment: "node",
          include: ["test/runtime/**/*.test.ts"],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        // The Worker and its Durable Object in workerd, against the real local container runtime.
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            // The service's Worker, but sandboxes named platform-… take the platform's path (test/worker/entry.ts).
            main: "./test/worker/entry.ts",
            miniflare: {
              // workerd's own container client runs each Sandbox's container (the plugin turns wrangler.toml's
              // containers off, and passes on no container engine: test/worker/workerd-on-engine.sh gives workerd
              // the runtime's engine at the socket path it dials by default).
              durableObjects: { Sandbox: { className: "Sandbox", useSQLite: true, container: { imageName: "cloudflare-dev/sandbox:workers-tests" } } },
              bindings: {
                SANDBOX_CONTAINER_URL: inject("runtimeApiUrl"),
                SANDBOX_RUNTIME_SECRET: inject("runtimeSecret"),
                SANDBOX_API_TOKEN: TEST_API_TOKEN,
                SANDBOX_PREVIEW_DOMAIN: TEST_PREVIEW_DOMAIN,
                SANDBOX_PREVIEW_PATH_ORIGIN: TEST_PREVIEW_PATH_ORIGIN,
              },
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/worker/**/*.test.ts"],
          globalSetup: ["test/worker/global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        // The whole chain as a user runs it (npm start: wrangler dev + the local runtime), shared by
        // every file: the framework adapters (Mastra, deepagents, exec hooks, OpenAI Agents, AI SDK, MCP)
        // over HTTP, Cloudflare's Bridge API through its own client, and the web console and preview
        // ports in a browser.
        test: {
          name: "stack",
          environment: "node",
          include: ["test/stack/**/*.test.ts"],
          globalSetup: ["test/stack/stack.ts"],
          setupFiles: ["test/stack/ready.ts"],
          // The exec-hook tests check that a stdin buffer is collectable once a call returned.
          execArgv: ["--expose-gc"],
          // A test here is a whole session of a framework's agent against one shared stack, its calls
          // beside every other file's: on a machine running other suites too, 30 s is not enough.
          testTimeout: 60_000,
          hookTimeout: 30_000,
        },
      },
      {
        // npm start's whole stack (wrangler dev + local runtime) driven over HTTP, and killed in parts
        // (crash-recovery.test.ts). Slow to boot: each file boots one.
        test: {
          name: "e2e",
          environment: "node",
          include: ["test/e2e/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
