/**
 * A `docker` command for wrangler, backed by the local runtime's Docker engine: what `wrangler dev`
 * runs with containers on (WRANGLER_DOCKER_BIN pointing at ./docker, WRANGLER_DOCKER_HOST at the
 * engine's socket that `npm start` prints). wrangler checks, builds, pulls and cleans up through the
 * CLI; workerd then runs the containers through the engine itself.
 *
 *   info [--format …]             the engine answers (the exit code is what wrangler reads)
 *   build … -t TAG … -f - CONTEXT the image is the runtime's own container: the tag is recorded, the
 *                                 Dockerfile read and compared with the project's (a warning if it differs)
 *   image inspect TAG --format F  the formats wrangler reads (tags, exposed ports, size and layers)
 *   rmi TAG…, pull EGRESS-IMAGE    a tag forgotten; the egress sidecar is the runtime's, nothing to pull
 *   ps -a --filter ancestor=TAG --format {{.ID}}, rm --force ID…   the cleanup wrangler does at exit
 *   context ls --format json, version
 *
 * Anything else exits 1 naming what it was asked, on stderr, and is added to `cli-unserved.log` beside
 * the engine's socket: a wrangler that calls something new is told, not silently satisfied, even
 * where it ignores the exit code (its cleanup does).
 */
import { createHash, randomBytes } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { engineRequest } from "./engine-client.ts";
import { readImages, writeImages } from "./images.ts";

const PROJECT_DOCKERFILE = fileURLToPath(new URL("../../container/Dockerfile", import.meta.url));
/** The egress sidecar images wrangler pulls (its default, or MINIFLARE_CONTAINER_EGRESS_IMAGE): served by the runtime. */
const EGRESS_IMAGE = /(^|\/)proxy-everything(:|@|$)/;

class Refusal extends Error {}
/** A call (a command, a format, a filter) this stand-in does not serve: logged as well as refused. */
class Unserved extends Refusal {}

/** Where refused calls are kept (beside the engine's socket), when the socket is known. */
export const UNSERVED_LOG = "cli-unserved.log";

function socketOf(host: string | undefined): string {
  const value = host ?? process.env.WRANGLER_DOCKER_HOST ?? process.env.DOCKER_HOST;
  if (!value) throw new Refusal("no engine named: pass --host, or set WRANGLER_DOCKER_HOST or DOCKER_HOST to the socket `npm start` prints (unix://…)");
  if (!value.startsWith("unix://")) throw new Refusal(`the runtime's engine is a unix socket (unix://…), not ${value}`);
  return value.slice("unix://".length);
}

/** `--flag value` or `--flag=value` from args (removed from them); undefined when absent. */
function takeOption(args: string[], ...names: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    for (const name of names) {
      if (arg === name && i + 1 < args.length) return args.splice(i, 2)[1];
      if (arg.startsWith(`${name}=`)) return args.splice(i, 1)[0]!.slice(name.length + 1);
    }
  }
  return undefined;
}

function takeFlag(args: string[], ...names: string[]): boolean {
  const at = args.findIndex((arg) => names.includes(arg));
  if (at < 0) return false;
  args.splice(at, 1);
  return true;
}

async function ping(socket: string): Promise<void> {
  let reply;
  try {
    reply = await engineRequest(socket, "GET", "/_ping");
  } catch (error) {
    throw new Refusal(`the runtime's Docker engine at unix://${socket} does not answer (${(error as Error).message}): is \`npm start\` running?`);
  }
  if (reply.status !== 200) throw new Refusal(`the runtime's Docker engine answered /_ping with ${reply.status}`);
}

function readStdin(): string {
  try {
    return readFileSync(0, "utf8");
  } catch {
    return "";
  }
}

async function info(socket: string, args: string[]): Promise<string> {
  const format = takeOption(args, "--format", "-f");
  await ping(socket);
  const reply = await engineRequest(socket, "GET", "/info");
  const body = reply.body as Record<string, unknown>;
  if (format === undefined) return `Server: ${String(body.ServerVersion)}\n Containers: ${String(body.Containers)}\n`;
  if (format.replace(/\s/g, "") === "{{json.SecurityOptions}}") return `${JSON.stringify(body.SecurityOptions ?? [])}\n`;
  throw new Unserved(`info --format ${format} is not a format this stand-in answers`);
}

function build(socket: string, args: string[]): string {
  const tag = takeOption(args, "-t", "--tag");
  const file = takeOption(args, "-f", "--file");
  if (!tag) throw new Refusal("build needs -t TAG");
  const dockerfile = file === "-" || file === undefined ? readStdin() : readFileSync(file, "utf8");
  const images = readImages(socket).filter((image) => image.tag !== tag);
  images.push({ tag, id: `sha256:${randomBytes(32).toString("hex")}`, created: new Date().toISOString() });
  writeImages(socket, images);
  let note = `${tag}: the local runtime's own container (its server on the image's root file system; SANDBOX_ROOTFS names a built one)\n`;
  if (hash(dockerfile) !== hash(readFileSync(PROJECT_DOCKERFILE, "utf8"))) {
    note += "warning: this Dockerfile is not the project's container/Dockerfile: the runtime runs its own container whatever it says\n";
  }
  return note;
}

function hash(text: string): string {
  return createHash("sha256").update(text.replace(/\r\n/g, "\n").trim()).digest("hex");
}

/** The `--format` templates wrangler reads, answered for the runtime's image. */
function imageInspect(socket: string, args: string[]): string {
  const format = takeOption(args, "--format", "-f");
  const tags = args.filter((arg) => !arg.startsWith("-"));
  const images = readImages(socket);
  let out = "";
  for (const tag of tags) {
    const image = images.find((candidate) => candidate.tag === tag || candidate.id === tag);
    if (!image) throw new Refusal(`No such image: ${tag}`);
    const normalized = (format ?? "").replace(/\s+/g, " ").trim();
    if (format === undefined) out += `${JSON.stringify([{ Id: image.id, RepoTags: [image.tag], Created: image.created, Config: { ExposedPorts: { "3000/tcp": {} } } }])}\n`;
    else if (normalized === "{{ range .RepoTags }}{{ . }} {{ end }}" || /^\{\{ ?range \.RepoTags ?\}\}/.test(normalized)) out += `${image.tag}\n`;
    else if (normalized === "{{ len .Config.ExposedPorts }}") out += "1\n";
    else if (normalized === "{{ .Size }} {{ len .RootFS.Layers }}") out += "0 1\n";
    else if (normalized === "{{ .Id }}" || normalized === "{{.Id}}") out += `${image.id}\n`;
    else throw new Unserved(`image inspect --format ${format} is not a format this stand-in answers`);
  }
  return out;
}

function rmi(socket: string, args: string[]): string {
  const names = args.filter((arg) => !arg.startsWith("-"));
  writeImages(
    socket,
    readImages(socket).filter((image) => !names.includes(image.tag) && !names.includes(image.id)),
  );
  return names.map((name) => `Untagged: ${name}\n`).join("");
}

function pull(args: string[]): string {
  takeOption(args, "--platform");
  const image = args.find((arg) => !arg.startsWith("-"));
  if (image !== undefined && (EGRESS_IMAGE.test(image) || image === process.env.MINIFLARE_CONTAINER_EGRESS_IMAGE)) {
    return `${image}: the egress sidecar is served by the local runtime (nothing to pull)\n`;
  }
  throw new Unserved(`pull ${image ?? ""}: the local runtime pulls no images (it runs its own container); build from the Dockerfile instead`);
}

async function ps(socket: string, args: string[]): Promise<string> {
  const all = takeFlag(args, "-a", "--all");
  const filter = takeOption(args, "--filter");
  const format = takeOption(args, "--format");
  const ancestor = filter?.startsWith("ancestor=") ? filter.slice("ancestor=".length) : undefined;
  if (filter !== undefined && ancestor === undefined) throw new Unserved(`ps --filter ${filter} is not a filter this stand-in answers`);
  if (format !== undefined && format.replace(/\s/g, "") !== "{{.ID}}") throw new Unserved(`ps --format ${format} is not a format this stand-in answers`);
  const reply = await engineRequest(socket, "GET", `/containers/json${all ? "?all=1" : ""}`);
  const rows = (reply.body as { Id: string; Image: string }[]).filter((row) => ancestor === undefined || row.Image === ancestor);
  return rows.map((row) => `${row.Id.slice(0, 12)}\n`).join("");
}

async function rm(socket: string, args: string[]): Promise<string> {
  const force = takeFlag(args, "-f", "--force");
  let out = "";
  for (const id of args.filter((arg) => !arg.startsWith("-"))) {
    const reply = await engineRequest(socket, "DELETE", `/containers/${encodeURIComponent(id)}${force ? "?force=true" : ""}`);
    if (reply.status !== 204) throw new Refusal(`rm ${id}: ${(reply.body as { message?: string })?.message ?? reply.status}`);
    out += `${id}\n`;
  }
  return out;
}

async function run(argv: string[]): Promise<string> {
  const args = [...argv];
  const host = takeOption(args, "--host", "-H");
  const command = args.shift();
  if (command === "version" || command === "--version") return "Docker version edge-sandbox (the local runtime's docker stand-in)\n";
  if (command === "context" && args[0] === "ls") {
    const named = host ?? process.env.WRANGLER_DOCKER_HOST ?? process.env.DOCKER_HOST;
    return named ? `${JSON.stringify({ Name: "edge-sandbox", Current: true, DockerEndpoint: named })}\n` : "";
  }
  const socket = socketOf(host);
  if (command === "info") return info(socket, args);
  if (command === "build" || (command === "buildx" && args.shift() === "build")) return build(socket, args);
  if (command === "image" && args[0] === "inspect") return imageInspect(socket, args.slice(1));
  if (command === "inspect") return imageInspect(socket, args);
  if (command === "rmi" || (command === "image" && args[0] === "rm" && args.shift())) return rmi(socket, args);
  if (command === "pull") return pull(args);
  if (command === "ps") return ps(socket, args);
  if (command === "rm") return rm(socket, args);
  throw new Unserved(`the local runtime's docker stand-in does not do: docker ${argv.join(" ")}`);
}

function logRefusal(argv: string[], message: string): void {
  const args = [...argv];
  let socket: string;
  try {
    socket = socketOf(takeOption(args, "--host", "-H"));
  } catch {
    return;
  }
  try {
    appendFileSync(join(dirname(socket), UNSERVED_LOG), `${JSON.stringify({ at: new Date().toISOString(), argv, message })}\n`, { mode: 0o600 });
  } catch {
    // the engine's folder is gone: the message on stderr is all there is
  }
}

try {
  process.stdout.write(await run(process.argv.slice(2)));
} catch (error) {
  const message = (error as Error).message;
  if (!(error instanceof Refusal) || error instanceof Unserved) logRefusal(process.argv.slice(2), message);
  process.stderr.write(`${error instanceof Refusal ? "" : "docker stand-in: "}${message}\n`);
  process.exit(1);
}
