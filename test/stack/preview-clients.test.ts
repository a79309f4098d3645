/**
 * Preview URLs (`http://<port>-<id>.localhost:<port>/`) opened by clients that resolve names through
 * the system's resolver: Node's own fetch, Python's urllib, and curl. Browsers and curl resolve
 * `*.localhost` themselves; the rest ask getaddrinfo, which answers such names once nss-myhostname is
 * in the resolver's list (npm start and npm test see to it as root on Debian: scripts/os-packages/).
 * Each port stays an origin of its own, and a name naming no exposed port is never another's page.
 */
import { afterAll, describe, expect, it } from "vitest";
import { getHttpSandbox } from "../../src/client/index.ts";
import { httpConnection } from "./helpers.ts";

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}
const childProcess = (process as unknown as {
  getBuiltinModule(id: "node:child_process"): { spawnSync(command: string, args: string[], options: { encoding: "utf8"; timeout: number }): Run };
}).getBuiltinModule("node:child_process");

const connection = httpConnection("preview-clients");
const sandbox = getHttpSandbox(connection.sandboxId, connection);
afterAll(() => sandbox.destroy());

const PYTHON_GET = "import sys, urllib.request\nwith urllib.request.urlopen(sys.argv[1], timeout=30) as answer:\n    sys.stdout.write(answer.read().decode())";

/** A page server on `port` in the sandbox that answers `name` on every path. */
async function servePage(port: number, name: string): Promise<string> {
  await sandbox.writeFile(`page-${port}/index.html`, name);
  const server = await sandbox.startProcess(`python3 -m http.server ${port} --bind 127.0.0.1 --directory page-${port}`);
  await server.waitForPort(port);
  return (await sandbox.exposePort(port)).url;
}

describe("a preview URL", () => {
  it("opens with Node's fetch, Python's urllib and curl, each port on its own origin", async () => {
    const first = await servePage(8080, "first page");
    const second = await servePage(8081, "second page");
    expect(new URL(first).hostname).toMatch(/\.localhost$/);
    expect(new URL(first).origin).not.toBe(new URL(second).origin);
    expect(new URL(first).origin).not.toBe(new URL(connection.url).origin);

    // Node's fetch, no resolver of ours.
    const answer = await fetch(first);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe("first page");
    expect(await (await fetch(second)).text()).toBe("second page");

    const python = childProcess.spawnSync("python3", ["-c", PYTHON_GET, second], { encoding: "utf8", timeout: 60_000 });
    expect(python.stderr).toBe("");
    expect(python.stdout).toBe("second page");

    const curl = childProcess.spawnSync("curl", ["-sS", "--fail", first], { encoding: "utf8", timeout: 60_000 });
    expect(curl.stderr).toBe("");
    expect(curl.stdout).toBe("first page");
  });

  it("of a port not exposed resolves too, and is that port's 404, not another port's page", async () => {
    const missing = new URL(connection.url);
    missing.hostname = `9099-${connection.sandboxId}.localhost`;
    const answer = await fetch(missing);
    expect(answer.status).toBe(404);
    expect(((await answer.json()) as { code: string }).code).toBe("PORT_NOT_EXPOSED");
  });
});
