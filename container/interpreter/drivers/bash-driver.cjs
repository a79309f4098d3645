"use strict";
/**
 * The bash side of a code context: one long-lived bash, fed cells by this small Node process, so a
 * cell's `cd`, `export`, variables and functions are there for the next cell (a stateful shell, not
 * a command per run). Plain CommonJS, run from its file like the JavaScript driver.
 *
 * It talks to the server over fd 3 in the frames of the other drivers: a 5-byte header (payload
 * length, big-endian u32; kind: 1 stdout bytes, 2 stderr bytes, 3 a JSON message) and the payload.
 * The server sends `run` {id, code, env?} and `interrupt` {id}; this side sends `ready`, then per
 * cell its output frames, `error` {id, error} when the cell's last status is not 0, and `done` {id}.
 *
 * bash reads its script from a pipe, one cell at a time, each sourced from a here-document so that an
 * interrupt (SIGINT to bash and everything it started, as a terminal's Ctrl-C would) returns from the
 * cell, not from the shell. A cell's end is told on a status pipe, and marked in its stdout and
 * stderr with a token no cell can guess, so the cell's last output comes before its `done`.
 * `exit` ends the shell: the context then restarts, as for any interpreter that dies.
 */
const fs = require("node:fs");
const net = require("node:net");
const { randomBytes } = require("node:crypto");
const { spawn } = require("node:child_process");

const CONTROL_FD = 3;
const STDOUT = 1;
const STDERR = 2;
const MESSAGE = 3;
/** bash's status pipe (its fd 4): the shell's version once, then each cell's last status. */
const STATUS_FD = 4;
const TOKEN = randomBytes(12).toString("hex");
const MARKER = Buffer.from(`\0${TOKEN}\n`);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * An interrupt returns from the cell (the here-document it is sourced from), not from the shell.
 * Set again after every cell: once its trap has returned from a cell, bash would not run it again.
 */
const ARM_INTERRUPT = "trap - INT; trap 'return 130 2>/dev/null' INT\n";

// ── the channel to the server ──────────────────────────────────────────────

const channel = new net.Socket({ fd: CONTROL_FD, readable: true, writable: true });
channel.on("error", () => process.exit(0)); // the server is gone
channel.on("end", () => process.exit(0));

function sendFrame(kind, payload) {
  const header = Buffer.allocUnsafe(5);
  header.writeUInt32BE(payload.length, 0);
  header[4] = kind;
  return channel.write(Buffer.concat([header, payload]));
}

const send = (message) => sendFrame(MESSAGE, Buffer.from(JSON.stringify(message)));

// ── the shell ───────────────────────────────────────────────────────────────

const shell = spawn("bash", ["--noprofile", "--norc", "-s"], { stdio: ["pipe", "pipe", "pipe", "ignore", "pipe"] });
shell.on("error", (error) => {
  process.stderr.write(`cannot start bash: ${error.message}\n`);
  process.exit(127);
});
shell.on("exit", (code, signal) => process.exit(signal ? 128 + (require("node:os").constants.signals[signal] ?? 0) : (code ?? 1)));
// An interrupt is for the shell and what it runs; this process stays.
process.on("SIGINT", () => {});

/** Finds the end marker in one output stream, passing on everything else as it comes. */
class MarkedStream {
  constructor(kind) {
    this.kind = kind;
    this.held = Buffer.alloc(0);
    this.marks = 0;
  }

  push(chunk) {
    let data = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = Buffer.alloc(0);
    for (let at = data.indexOf(MARKER); at !== -1; at = data.indexOf(MARKER)) {
      if (at > 0) forward(this.kind, data.subarray(0, at));
      data = data.subarray(at + MARKER.length);
      this.marks++;
      settle();
    }
    // Hold back an end that may be the start of a marker cut between two chunks.
    const keep = heldPrefix(data);
    if (data.length - keep > 0) forward(this.kind, data.subarray(0, data.length - keep));
    if (keep > 0) this.held = Buffer.from(data.subarray(data.length - keep));
  }
}

function heldPrefix(data) {
  for (let length = Math.min(MARKER.length - 1, data.length); length > 0; length--) {
    if (data.subarray(data.length - length).equals(MARKER.subarray(0, length))) return length;
  }
  return 0;
}

function forward(kind, data) {
  if (!sendFrame(kind, data)) {
    shell.stdout.pause();
    shell.stderr.pause();
    channel.once("drain", () => {
      shell.stdout.resume();
      shell.stderr.resume();
    });
  }
}

const streams = { stdout: new MarkedStream(STDOUT), stderr: new MarkedStream(STDERR) };
shell.stdout.on("data", (chunk) => streams.stdout.push(chunk));
shell.stderr.on("data", (chunk) => streams.stderr.push(chunk));

const statuses = [];
let statusText = "";
shell.stdio[STATUS_FD].on("data", (chunk) => {
  statusText += chunk.toString("utf8");
  let newline;
  while ((newline = statusText.indexOf("\n")) !== -1) {
    statuses.push(statusText.slice(0, newline));
    statusText = statusText.slice(newline + 1);
  }
  settle();
});

// ── cells ───────────────────────────────────────────────────────────────────

const queue = [];
/** The cell running now: {id, interrupted, marks}. */
let running;
let version;

const quote = (value) => `'${value.replace(/'/g, "'\\''")}'`;

/** The script that runs one cell, with its own variables set for its length. */
function cellScript(code, env, number) {
  const names = Object.keys(env ?? {});
  const set = names.map((name, i) => `__sandbox_env_${i}=$(declare -p ${name} 2>/dev/null || echo 'unset ${name}'); export ${name}=${quote(env[name])}\n`);
  const restore = names.map((_, i) => `eval "$__sandbox_env_${i}"; unset __sandbox_env_${i}\n`);
  const end = `__SANDBOX_CELL_${TOKEN}_${number}`;
  return (
    set.join("") +
    `. /dev/fd/5 5<<'${end}' 4>&- </dev/null\n${code}${code.endsWith("\n") ? "" : "\n"}${end}\n` +
    `__sandbox_status=$?\n` +
    ARM_INTERRUPT +
    restore.join("") +
    `printf '%s\\n' "$__sandbox_status" >&4; printf '\\000${TOKEN}\\n'; printf '\\000${TOKEN}\\n' >&2\n`
  );
}

let cellNumber = 0;

function startNext() {
  if (running || version === undefined || queue.length === 0) return;
  const { id, code, env } = queue.shift();
  const bad = Object.keys(env ?? {}).filter((name) => !NAME.test(name));
  if (bad.length > 0) {
    send({ type: "error", id, error: { name: "InvalidEnv", value: `bash cannot hold variables named ${bad.join(", ")}`, traceback: [] } });
    send({ type: "done", id });
    startNext();
    return;
  }
  running = { id, interrupted: false, marks: streams.stdout.marks + streams.stderr.marks + 2 };
  shell.stdin.write(cellScript(code, env, ++cellNumber));
}

/** A cell is over once its status and both markers are in. */
function settle() {
  if (version === undefined) {
    if (statuses.length === 0) return;
    version = statuses.shift();
    send({ type: "ready", language: "bash", version, pid: process.pid, cwd: process.cwd() });
    startNext();
    return;
  }
  if (!running || statuses.length === 0 || streams.stdout.marks + streams.stderr.marks < running.marks) return;
  const status = Number(statuses.shift());
  const { id, interrupted } = running;
  running = undefined;
  if (interrupted) send({ type: "error", id, error: { name: "Interrupted", value: "The cell was interrupted", traceback: [] } });
  else if (status !== 0) send({ type: "error", id, error: { name: "ExitStatus", value: `The cell's last command exited with status ${status}`, traceback: [] } });
  send({ type: "done", id });
  startNext();
}

/** bash and every process it started (its descendants, by their parent ids). */
function shellTree() {
  const children = new Map();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(Number(entry));
  }
  const tree = [];
  const visit = (pid) => {
    tree.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(shell.pid);
  return tree;
}

function interrupt(id) {
  if (!running || running.id !== id) return;
  running.interrupted = true;
  for (const pid of shellTree()) {
    try {
      process.kill(pid, "SIGINT");
    } catch {
      // gone already
    }
  }
}

let pending = Buffer.alloc(0);
channel.on("data", (chunk) => {
  pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
  while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(0)) {
    const length = pending.readUInt32BE(0);
    const kind = pending[4];
    const payload = pending.subarray(5, 5 + length);
    pending = pending.subarray(5 + length);
    if (kind !== MESSAGE) continue;
    const message = JSON.parse(payload.toString("utf8"));
    if (message.type === "run") {
      queue.push(message);
      startNext();
    } else if (message.type === "interrupt") interrupt(message.id);
  }
});

shell.stdin.write(`${ARM_INTERRUPT}printf '%s\\n' "$BASH_VERSION" >&4\n`);
