/**
 * A CA and a server certificate for the upstream servers of the egress tests, as a real server
 * would have one (made by openssl, the way operators make theirs): what the proxy's own TLS to a
 * server checks through the test name map's `ca`.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export function upstreamCertificates(dir: string, name: string): { ca: string; key: string; cert: string } {
  const run = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-noenc", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=upstream test CA", "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE"]);
  run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-noenc", "-keyout", "leaf.key", "-out", "leaf.pem", "-CA", "ca.pem", "-CAkey", "ca.key", "-subj", `/CN=${name}`, "-days", "2", "-addext", `subjectAltName=DNS:${name}`]);
  const read = (file: string) => readFileSync(join(dir, file), "utf8");
  return { ca: read("ca.pem"), key: read("leaf.key"), cert: read("leaf.pem") };
}
