/**
 * The OS package checker against a PATH and a Python of the test's own: what it finds, and what it
 * decides (install, print the command, fail in CI, only say so off Linux). apt is never run: the
 * installer is a stand-in that puts the command on the fake PATH, as apt-get would.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { decide, type Circumstances } from "../../scripts/os-packages/decide.ts";
import { ensureOsPackages, type EnsureOptions } from "../../scripts/os-packages/ensure.ts";
import { OS_PACKAGES, packagesFor, type OsPackage } from "../../scripts/os-packages/packages.ts";
import { isInstalled, missingPackages, type ProbeEnvironment } from "../../scripts/os-packages/probe.ts";
import { withMyhostname } from "../../scripts/os-packages/nsswitch.ts";

const root = mkdtempSync(join(tmpdir(), "os-packages-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const PACKAGES: OsPackage[] = [
  { name: "bubblewrap", probe: { commands: ["bwrap"] }, needs: ["start", "test"], why: "isolation" },
  { name: "util-linux", probe: { commands: ["unshare", "nsenter"] }, needs: ["start"], why: "network" },
  { name: "python3-numpy", probe: { pythonImport: "numpy" }, needs: ["test"], why: "code tests" },
  { name: "python3-pandas", probe: { pythonImport: "pandas" }, needs: ["test"], why: "code tests" },
  { name: "chromium", probe: { commands: ["chromium"] }, needs: ["test"], why: "browser test" },
];

let bin: string;
let probe: ProbeEnvironment;

function executable(dir: string, name: string, body = "#!/bin/sh\nexit 0\n"): void {
  writeFileSync(join(dir, name), body);
  chmodSync(join(dir, name), 0o755);
}

beforeEach(() => {
  bin = mkdtempSync(join(root, "bin-"));
  const other = mkdtempSync(join(root, "other-"));
  executable(bin, "bwrap");
  executable(bin, "unshare");
  executable(other, "nsenter"); // found in the PATH's second folder
  writeFileSync(join(bin, "chromium"), "not executable");
  mkdirSync(join(bin, "apt-get")); // a folder is no command
  // A Python that imports numpy and nothing else.
  const python = join(root, `python-${Math.random().toString(36).slice(2)}`);
  writeFileSync(python, '#!/bin/sh\n[ "$2" = "import numpy" ]\n');
  chmodSync(python, 0o755);
  probe = { path: `${bin}:${other}`, python };
});

const byName = (name: string) => PACKAGES.find((pkg) => pkg.name === name)!;

describe("probes", () => {
  it("finds commands as executable files on the PATH, and modules through the system Python", () => {
    expect(isInstalled(byName("bubblewrap"), probe)).toBe(true);
    expect(isInstalled(byName("util-linux"), probe)).toBe(true);
    expect(isInstalled(byName("chromium"), probe)).toBe(false);
    expect(isInstalled(byName("python3-numpy"), probe)).toBe(true);
    expect(isInstalled(byName("python3-pandas"), probe)).toBe(false);
    expect(isInstalled(byName("python3-numpy"), { ...probe, python: join(root, "no-python") })).toBe(false);
    expect(missingPackages(PACKAGES, probe).map((pkg) => pkg.name)).toEqual(["python3-pandas", "chromium"]);
  });
});

describe("a resolver probe", () => {
  const resolver: OsPackage = { name: "libnss-myhostname", probe: { resolvesToLoopback: "check.localhost" }, needs: ["start"], why: "preview URLs" };
  /** A getent on the probe's PATH that answers with `addresses`, or fails. */
  const getent = (addresses: string[] | "fails") =>
    executable(bin, "getent", addresses === "fails" ? "#!/bin/sh\nexit 2\n" : `#!/bin/sh\nprintf '${addresses.map((address) => `${address}  STREAM $2\\n`).join("")}'\n`);

  it("counts a name the resolver gives loopback addresses, and only such a name", () => {
    getent(["::1", "127.0.0.1"]);
    expect(isInstalled(resolver, probe)).toBe(true);
    getent(["127.0.0.1", "93.184.216.34"]);
    expect(isInstalled(resolver, probe)).toBe(false);
    getent("fails");
    expect(isInstalled(resolver, probe)).toBe(false);
  });

  it("is settled after an install that left it unresolved (the module not in the resolver's list)", () => {
    getent("fails");
    const dir = mkdtempSync(join(root, "apt-"));
    executable(dir, "apt-get");
    const settled: string[] = [];
    const ok = ensureOsPackages(["start"], {
      packages: [{ ...resolver, settle: () => (settled.push("wired"), getent(["127.0.0.1"])) }],
      probe: { ...probe, path: `${probe.path}:${dir}` },
      platform: "linux",
      uid: 0,
      env: {},
      say: () => undefined,
      install: () => ({ ok: true, output: "" }),
    });
    expect(settled).toEqual(["wired"]);
    expect(ok).toBe(true);
  });

  it("puts myhostname after files on the hosts line, as Debian's package does, and only once", () => {
    expect(withMyhostname("passwd: files\nhosts:          files mdns4_minimal [NOTFOUND=return] dns\n")).toBe(
      "passwd: files\nhosts:          files myhostname mdns4_minimal [NOTFOUND=return] dns\n",
    );
    expect(withMyhostname("hosts: files [SUCCESS=return] dns # local\n")).toBe("hosts: files [SUCCESS=return] myhostname dns # local\n");
    expect(withMyhostname("hosts: dns\n")).toBe("hosts: myhostname dns\n");
    expect(withMyhostname("passwd: files\n")).toBe("passwd: files\nhosts:          files myhostname dns\n");
    expect(withMyhostname("hosts: files myhostname dns\n")).toBe("hosts: files myhostname dns\n");
  });
});

describe("decisions", () => {
  const missing = [byName("chromium"), byName("python3-pandas")];
  const linuxRoot: Circumstances = { platform: "linux", root: true, aptGet: true, ci: false };

  it("does nothing when nothing is missing", () => {
    expect(decide(["test"], [], linuxRoot)).toEqual({ action: "nothing" });
  });

  it("installs as root where apt-get is", () => {
    const decision = decide(["test"], missing, linuxRoot);
    expect(decision).toMatchObject({ action: "install", packages: ["chromium", "python3-pandas"] });
    expect(decision.action === "install" && decision.message).toBe(
      "npm test: installing missing OS packages: apt-get install -y --no-install-recommends chromium python3-pandas",
    );
  });

  it("prints the exact command for anyone else", () => {
    for (const facts of [{ ...linuxRoot, root: false }, { ...linuxRoot, aptGet: false }]) {
      const decision = decide(["start"], missing, facts);
      expect(decision.action).toBe("stop");
      expect(decision.action === "stop" && decision.message).toContain("sudo apt-get install -y --no-install-recommends chromium python3-pandas");
      expect(decision.action === "stop" && decision.message.split("\n")).toHaveLength(1);
    }
  });

  it("in CI says it cannot install, rather than letting tests skip", () => {
    const decision = decide(["test", "image"], missing, { ...linuxRoot, root: false, ci: true });
    expect(decision.action).toBe("stop");
    expect(decision.action === "stop" && decision.message).toMatch(/^npm test, npm run test:image: CI: .*cannot be installed \(not root\)/);
  });

  it("off Linux only says which parts need Linux", () => {
    const decision = decide(["test"], missing, { ...linuxRoot, platform: "darwin" });
    expect(decision.action).toBe("not-linux");
    expect(decision.action === "not-linux" && decision.message).toContain("chromium (browser test)");
  });
});

describe("ensureOsPackages", () => {
  function run(options: EnsureOptions & { needs?: ("start" | "test" | "image")[] }) {
    const lines: string[] = [];
    const installs: string[][] = [];
    const ok = ensureOsPackages(options.needs ?? ["start"], {
      packages: PACKAGES,
      probe,
      platform: "linux",
      uid: 0,
      env: {},
      say: (line) => lines.push(line),
      ...options,
      install:
        options.install ??
        ((names) => {
          installs.push([...names]);
          executable(bin, "chromium"); // what apt-get would leave
          return { ok: true, output: "" };
        }),
    });
    return { ok, lines, installs };
  }

  /** The probe with an apt-get on its PATH (never run: the installer is a stand-in). */
  function withAptGet(): ProbeEnvironment {
    const dir = mkdtempSync(join(root, "apt-"));
    executable(dir, "apt-get");
    return { ...probe, path: `${probe.path}:${dir}` };
  }

  it("is silent when everything is present", () => {
    expect(run({ needs: ["start"] })).toEqual({ ok: true, lines: [], installs: [] });
  });

  it("installs what is missing in one apt-get run, and says so in one line", () => {
    // pandas stays missing after the install: that is a failure, with the command.
    const result = run({ needs: ["test"], probe: withAptGet() });
    expect(result.installs).toEqual([["python3-pandas", "chromium"]]);
    expect(result.lines[0]).toBe("npm test: installing missing OS packages: apt-get install -y --no-install-recommends python3-pandas chromium");
    expect(result.ok).toBe(false);
    expect(result.lines[1]).toBe("apt-get could not install python3-pandas: run sudo apt-get install -y --no-install-recommends python3-pandas");
  });

  it("goes on once the install brought everything", () => {
    const result = run({ needs: ["test"], packages: PACKAGES.filter((pkg) => pkg.name !== "python3-pandas"), probe: withAptGet() });
    expect(result).toMatchObject({ ok: true, installs: [["chromium"]] });
    expect(result.lines).toHaveLength(1);
  });

  it("stops with the command when it cannot install, unless the caller can go on without", () => {
    const notRoot = run({ needs: ["test"], uid: 1000 });
    expect(notRoot.ok).toBe(false);
    expect(notRoot.installs).toEqual([]);
    expect(notRoot.lines).toEqual([expect.stringContaining("run sudo apt-get install -y --no-install-recommends python3-pandas chromium")]);
    expect(run({ needs: ["test"], uid: 1000, required: false }).ok).toBe(true);
    // CI never goes on without.
    expect(run({ needs: ["test"], uid: 1000, required: false, env: { CI: "true" } }).ok).toBe(false);
  });

  it("fails in CI when apt-get cannot install", () => {
    const result = run({
      needs: ["test"],
      env: { CI: "true" },
      probe: withAptGet(),
      install: () => ({ ok: false, output: "E: Unable to locate package chromium" }),
    });
    expect(result.ok).toBe(false);
    expect(result.lines.at(-1)).toContain("E: Unable to locate package chromium\napt-get could not install python3-pandas, chromium: run sudo apt-get");
  });

  it("off Linux goes on, naming the parts that need Linux", () => {
    const result = run({ needs: ["test"], platform: "darwin", env: { CI: "true" } });
    expect(result.ok).toBe(true);
    expect(result.lines).toEqual([expect.stringMatching(/^npm test: not Linux.*bubblewrap \(isolation\).*chromium \(browser test\)$/)]);
  });
});

describe("the declaration", () => {
  it("names each package once, each with a probe and a reason", () => {
    const names = OS_PACKAGES.map((pkg) => pkg.name);
    expect(new Set(names).size).toBe(names.length);
    for (const pkg of OS_PACKAGES) {
      expect(pkg.needs.length).toBeGreaterThan(0);
      expect(pkg.why).not.toBe("");
      const probe = pkg.probe;
      expect("commands" in probe ? probe.commands.length : "pythonImport" in probe ? probe.pythonImport.length : probe.resolvesToLoopback.length).toBeGreaterThan(0);
    }
  });

  it("gives npm test everything npm start needs (the tests start the service)", () => {
    const forTest = packagesFor(["test"]);
    for (const pkg of packagesFor(["start"])) expect(forTest).toContain(pkg);
  });
});
