"use strict";
/**
 * The JavaScript/TypeScript side of a code context: one long-lived Node process that runs cells for
 * the container server, one at a time, in one `vm` context, and reports what each does the moment
 * it happens. Plain CommonJS, run from its file (`node javascript-driver.cjs <language>`), with
 * `--expose-internals` for the two pieces of Node's own REPL it reuses: its parser (acorn) and its
 * top-level `await` rewrite. The argument after the file says the language ("typescript": Node's
 * type stripping runs on every cell first).
 *
 * It talks to the server over fd 3 in the frames of the Python driver: a 5-byte header (payload
 * length, big-endian u32; kind: 1 stdout bytes, 2 stderr bytes, 3 a JSON message) and the payload.
 * The server sends `run` {id, code, env?} and `interrupt` {id}; this side sends `ready`, then per cell its
 * output frames, `result` {id, result}, `error` {id, error}, and `done` {id} last.
 *
 * A worker thread reads the channel, so an interrupt is heard while the main thread is busy in a
 * cell. It stops a synchronous cell with SIGINT (`breakOnSigint`) and ends the wait of an
 * asynchronous one with a message. The signal is sent only while the cell is known to be inside its
 * watchdog (see `runGuarded`): Node's default SIGINT handler, which ends the process, is in place for
 * a moment as every `breakOnSigint` run starts and ends. console and process.stdout/stderr of the context write frames,
 * in order with the results; output of subprocesses started with inherited stdio goes to the
 * process's own stdout/stderr, which the server also reads (in order with the rest only roughly).
 */
const fs = require("node:fs");
const path = require("node:path");
const util = require("node:util");
const vm = require("node:vm");
const { Console } = require("node:console");
const { createRequire, stripTypeScriptTypes } = require("node:module");
const { Writable } = require("node:stream");
const { Worker } = require("node:worker_threads");

const CONTROL_FD = 3;
const STDOUT = 1;
const STDERR = 2;
const MESSAGE = 3;
const TYPESCRIPT = process.argv[2] === "typescript";
const CELL_FILE = /cell-\d+\.[jt]s/;

/** Node's REPL pieces; without them (another Node) cells still run, with fewer conveniences. */
const repl = (() => {
  try {
    return { acorn: require("internal/deps/acorn/acorn/dist/acorn"), processTopLevelAwait: require("internal/repl/await").processTopLevelAwait };
  } catch {
    return undefined;
  }
})();

// ── the channel to the server ──────────────────────────────────────────────

const pause = new Int32Array(new SharedArrayBuffer(4));

function sendFrame(kind, payload) {
  const frame = Buffer.allocUnsafe(5 + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  frame[4] = kind;
  payload.copy(frame, 5);
  let offset = 0;
  while (offset < frame.length) {
    try {
      offset += fs.writeSync(CONTROL_FD, frame, offset);
    } catch (error) {
      if (error.code !== "EAGAIN") process.exit(0); // the server is gone
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

function send(message) {
  sendFrame(MESSAGE, Buffer.from(JSON.stringify(message)));
}

/**
 * What the two threads share, each slot a cell's number (0: none): the cell running now, the cell
 * an interrupt is for, and the cell whose code is inside its watchdog (the gate, see `runGuarded`;
 * SIGNALLED once the reader has sent that cell its one signal).
 */
const RUNNING = 0;
const REQUESTED = 1;
const GATE = 2;
const SIGNALLED = -1;
const shared = new Int32Array(new SharedArrayBuffer(12));

/**
 * What the channel reader runs: frames in, runs and interrupts to the main thread (and SIGINT while the
 * gate is open for the cell). It reads
 * with its own event loop, never blocked in a read: a thread stuck in a read would hold up
 * process.exit() (which waits for every thread) forever.
 */
const READER_SOURCE = `
const net = require("node:net");
const { parentPort, workerData } = require("node:worker_threads");
const shared = workerData.shared;
const numbers = new Map();
let next = 0;
let pending = Buffer.alloc(0);
function onMessage(message) {
  if (message.type === "run") {
    const number = ++next;
    numbers.set(message.id, number);
    if (numbers.size > 64) numbers.delete(numbers.keys().next().value);
    parentPort.postMessage({ ...message, number });
  } else if (message.type === "interrupt") {
    const number = numbers.get(message.id);
    if (number === undefined) return;
    // The order matters: the request is published before the gate is read, and the main thread
    // opens the gate before it reads the request, so one of the two always sees the other.
    Atomics.store(shared, ${REQUESTED}, number);
    if (Atomics.compareExchange(shared, ${GATE}, number, ${SIGNALLED}) === number) process.kill(process.pid, "SIGINT");
    parentPort.postMessage({ type: "interrupt", number });
  }
}
const channel = new net.Socket({ fd: ${CONTROL_FD}, readable: true, writable: false });
channel.on("data", (chunk) => {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(0)) {
    const length = pending.readUInt32BE(0);
    const kind = pending[4];
    const payload = pending.subarray(5, 5 + length);
    pending = pending.subarray(5 + length);
    if (kind === ${MESSAGE}) onMessage(JSON.parse(payload.toString("utf8")));
  }
});
const end = () => parentPort.postMessage({ type: "eof" });
channel.on("end", end);
channel.on("error", end);
`;

// ── the context the cells run in ───────────────────────────────────────────

let runningId;

function outputStream(kind) {
  return new Writable({
    decodeStrings: true,
    write(chunk, _encoding, done) {
      sendFrame(kind, chunk);
      done();
    },
  });
}

const stdout = outputStream(STDOUT);
const stderr = outputStream(STDERR);

function createCellContext() {
  const context = vm.createContext({});
  const own = new Set(Object.getOwnPropertyNames(context));
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    if (own.has(name) || name === "console" || name === "process" || name === "global") continue;
    Object.defineProperty(context, name, Object.getOwnPropertyDescriptor(globalThis, name));
  }
  const cellProcess = new Proxy(process, {
    get(target, key) {
      if (key === "stdout") return stdout;
      if (key === "stderr") return stderr;
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  Object.assign(context, {
    console: new Console({ stdout, stderr, colorMode: false }),
    process: cellProcess,
    require: createRequire(path.join(process.cwd(), "[cells]")),
    display,
  });
  context.global = vm.runInContext("globalThis", context);
  return context;
}

// ── results ─────────────────────────────────────────────────────────────────

const DISPLAY_BUNDLE = Symbol("display bundle");

function inspect(value) {
  return util.inspect(value, { depth: 4, colors: false, maxArrayLength: 100, maxStringLength: 10_000, breakLength: 100 });
}

function base64(data) {
  if (typeof data === "string") return data;
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("base64");
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
}

function sendResult(value, main) {
  if (runningId === undefined) return;
  const bundle = value !== null && typeof value === "object" && value[DISPLAY_BUNDLE] ? { ...value[DISPLAY_BUNDLE] } : { text: inspect(value) };
  send({ type: "result", id: runningId, result: { ...bundle, isMainResult: main } });
}

/** display(value, …): each value as a result now, mid-cell; display.html(…) and friends for rich formats. */
function display(...values) {
  for (const value of values) sendResult(value, false);
}
const bundleOf = (bundle) => ({ [DISPLAY_BUNDLE]: bundle });
display.html = (html) => sendResult(bundleOf({ html: String(html) }), false);
display.markdown = (markdown) => sendResult(bundleOf({ markdown: String(markdown) }), false);
display.svg = (svg) => sendResult(bundleOf({ svg: String(svg) }), false);
display.latex = (latex) => sendResult(bundleOf({ latex: String(latex) }), false);
display.javascript = (code) => sendResult(bundleOf({ javascript: String(code) }), false);
display.png = (data) => sendResult(bundleOf({ png: base64(data) }), false);
display.jpeg = (data) => sendResult(bundleOf({ jpeg: base64(data) }), false);
display.json = (value) => sendResult(bundleOf({ json: JSON.parse(JSON.stringify(value)), text: inspect(value) }), false);

// ── errors ──────────────────────────────────────────────────────────────────

class InterruptedError extends Error {
  constructor() {
    super("Script execution was interrupted");
    this.name = "InterruptedError";
  }
}

/** Name, message and stack, without the frames of this driver below the cell's own. */
function errorPayload(error) {
  if (!util.types.isNativeError(error)) {
    const value = inspect(error);
    return { name: "Uncaught", value, traceback: [`Uncaught ${value}`] };
  }
  const interrupted = error.code === "ERR_SCRIPT_EXECUTION_INTERRUPTED" || error instanceof InterruptedError;
  const name = interrupted ? "InterruptedError" : String(error.name);
  const value = interrupted ? "Script execution was interrupted" : String(error.message);
  const lines = String(error.stack ?? `${name}: ${value}`).split("\n");
  let last = -1;
  lines.forEach((line, index) => {
    if (/^\s+at /.test(line) && CELL_FILE.test(line)) last = index;
  });
  const traceback = last >= 0 ? lines.slice(0, last + 1) : lines.filter((line) => !/^\s+at /.test(line));
  if (interrupted) traceback[0] = `${name}: ${value}`;
  return { name, value, traceback };
}

// ── running cells ───────────────────────────────────────────────────────────

/** The cell's program: parsed as a script, else (static `import`, `export`) as a module; undefined when neither parses. */
function parseCell(source) {
  const options = { ecmaVersion: "latest", allowAwaitOutsideFunction: true, allowHashBang: true };
  try {
    return repl.acorn.parse(source, { ...options, sourceType: "script" });
  } catch {
    try {
      return repl.acorn.parse(source, { ...options, sourceType: "module" });
    } catch {
      return undefined; // the real compile reports the syntax error
    }
  }
}

/** Newlines of the text an edit replaces, kept so the cell's line numbers stay right in a stack. */
const sameLines = (text) => "\n".repeat((text.match(/\n/g) ?? []).length);

/**
 * A static import as the dynamic import it amounts to, its names bound like the cell's other
 * top-level names: `import x, { a as b } from "m"` → `var { default: x, a: b } = await import("m")`.
 */
function importAsAwait(node, source) {
  const attributes = node.attributes?.length
    ? `, { with: { ${node.attributes.map((a) => `${source.slice(a.key.start, a.key.end)}: ${source.slice(a.value.start, a.value.end)}`).join(", ")} } }`
    : "";
  const load = `await import(${source.slice(node.source.start, node.source.end)}${attributes})`;
  const namespace = node.specifiers.find((s) => s.type === "ImportNamespaceSpecifier");
  const named = node.specifiers.filter((s) => s.type !== "ImportNamespaceSpecifier");
  const pattern = named.map((s) => {
    if (s.type === "ImportDefaultSpecifier") return `default: ${s.local.name}`;
    const imported = s.imported.type === "Literal" ? JSON.stringify(s.imported.value) : s.imported.name;
    return imported === s.local.name ? imported : `${imported}: ${s.local.name}`;
  });
  if (!namespace && pattern.length === 0) return `${load};`;
  if (!namespace) return `var { ${pattern.join(", ")} } = ${load};`;
  return `var ${namespace.local.name} = ${load}${pattern.length ? `, { ${pattern.join(", ")} } = ${namespace.local.name}` : ""};`;
}

/**
 * What makes a cell run as a notebook expects, in one pass over its top-level statements:
 * - `let`, `const` and `class` become `var`, so a cell can be run again without "already declared",
 *   and its names outlive it like Python's;
 * - static `import` becomes an awaited `import()` (a cell is a script, where `import` statements
 *   are not allowed), and `export` is dropped from what it exports: nothing imports a cell.
 */
function rewriteCell(source) {
  if (!repl) return source;
  const program = parseCell(source);
  if (!program) return source;
  const edits = [];
  const replace = (node, text) => edits.push({ at: node.start, cut: node.end - node.start, text: text + sameLines(source.slice(node.start, node.end)) });
  const hoist = (node) => {
    if (node.type === "VariableDeclaration" && (node.kind === "let" || node.kind === "const")) {
      edits.push({ at: node.start, cut: node.kind.length, text: node.kind === "const" ? "var  " : "var" });
    } else if (node.type === "ClassDeclaration" && node.id) {
      edits.push({ at: node.start, cut: 0, text: `var ${node.id.name} = ` }, { at: node.end, cut: 0, text: ";" });
    }
  };
  for (const node of program.body) {
    if (node.type === "ImportDeclaration") replace(node, importAsAwait(node, source));
    else if (node.type === "ExportNamedDeclaration" && node.declaration) {
      edits.push({ at: node.start, cut: node.declaration.start - node.start, text: "" });
      hoist(node.declaration);
    } else if (node.type === "ExportNamedDeclaration" || node.type === "ExportAllDeclaration") replace(node, "");
    else if (node.type === "ExportDefaultDeclaration") edits.push({ at: node.start, cut: node.declaration.start - node.start, text: "" });
    else hoist(node);
  }
  edits.sort((a, b) => a.at - b.at);
  for (const edit of edits.reverse()) source = source.slice(0, edit.at) + edit.text + source.slice(edit.at + edit.cut);
  return source;
}

function prepare(code) {
  let source = TYPESCRIPT ? stripTypeScriptTypes(code, { mode: "transform" }) : code;
  source = rewriteCell(source);
  const wrapped = repl && /\bawait\b/.test(source) ? repl.processTopLevelAwait(source) : null;
  return wrapped === null ? { source, async: false } : { source: wrapped, async: true };
}

let rejectWait;

function interruptible(promise) {
  return Promise.race([
    promise,
    new Promise((_resolve, reject) => {
      rejectWait = reject;
    }),
  ]).finally(() => {
    rejectWait = undefined;
  });
}

// A stray SIGINT (a cell's own `process.kill`) must not end the context; interrupts never come this way.
process.on("SIGINT", () => {});

/**
 * The gate: a `breakOnSigint` run of the driver's own code, inside which the cell's run nests.
 * While the outer watchdog runs, the inner one starts and stops without touching the SIGINT
 * handler, so between opening the gate and closing it a signal can only reach a watchdog, and the
 * reader signals only while the gate is open for the cell it interrupts.
 *
 * A signal reaches the watchdog through a helper thread, which may act a moment later. The gate
 * does not close before it has: left behind, the signal would stop the next cell instead.
 */
const gate = vm.createContext({ enter: undefined });
const gateScript = new vm.Script("enter()", { filename: "driver-gate" });
/** How long the gate waits for a signal on its way; only a cell that took SIGINT for itself makes it wait in vain. */
const SIGNAL_WAIT_MS = 2_000;

function runGuarded(number, run) {
  gate.enter = () => {
    Atomics.store(shared, GATE, number);
    let stopped = false;
    try {
      if (Atomics.load(shared, REQUESTED) === number) throw new InterruptedError();
      return run();
    } catch (error) {
      stopped = error?.code === "ERR_SCRIPT_EXECUTION_INTERRUPTED";
      throw error;
    } finally {
      if (Atomics.exchange(shared, GATE, 0) === SIGNALLED && !stopped) {
        // The signal sent for this cell has not stopped it yet: it will end this wait instead.
        const until = Date.now() + SIGNAL_WAIT_MS;
        while (Date.now() < until);
      }
    }
  };
  try {
    return gateScript.runInContext(gate, { breakOnSigint: true });
  } finally {
    gate.enter = undefined;
    Atomics.store(shared, GATE, 0);
  }
}

async function evaluate(context, code, number) {
  const { source, async } = prepare(code);
  const filename = path.join(process.cwd(), `cell-${number}.${TYPESCRIPT ? "ts" : "js"}`);
  const script = new vm.Script(source, { filename, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
  const value = runGuarded(number, () => script.runInContext(context, { breakOnSigint: true }));
  return async ? (await interruptible(value))?.value : value;
}

/** Sets a run's own variables; returns what puts them back as they were. */
function applyRunEnv(env) {
  if (!env) return () => {};
  const before = Object.keys(env).map((name) => [name, Object.hasOwn(process.env, name) ? process.env[name] : undefined]);
  Object.assign(process.env, env);
  return () => {
    for (const [name, value] of before) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

async function runCell(context, { id, code, number, env }) {
  runningId = id;
  Atomics.store(shared, RUNNING, number);
  const restoreEnv = applyRunEnv(env);
  let failure;
  try {
    const value = await evaluate(context, code, number);
    if (value !== undefined) sendResult(value, true);
  } catch (error) {
    failure = { error };
  }
  restoreEnv();
  Atomics.store(shared, RUNNING, 0);
  Atomics.store(shared, REQUESTED, 0);
  runningId = undefined;
  if (failure) send({ type: "error", id, error: errorPayload(failure.error) });
  send({ type: "done", id });
}

function main() {
  const context = createCellContext();
  const queue = [];
  let busy = false;
  const pump = async () => {
    if (busy) return;
    busy = true;
    while (queue.length > 0) await runCell(context, queue.shift());
    busy = false;
  };
  const reader = new Worker(READER_SOURCE, { eval: true, workerData: { shared } });
  reader.on("message", (message) => {
    if (message.type === "eof") process.exit(0);
    if (message.type === "interrupt") {
      if (Atomics.load(shared, RUNNING) === message.number) rejectWait?.(new InterruptedError());
      return;
    }
    queue.push(message);
    void pump();
  });
  reader.on("error", () => process.exit(1));
  reader.once("online", () => {
    send({ type: "ready", language: TYPESCRIPT ? "typescript" : "javascript", version: process.version, pid: process.pid, cwd: process.cwd() });
  });
  // A cell's stray rejection or exception must not take the context down: report it on stderr.
  process.on("unhandledRejection", (reason) => stderr.write(`Unhandled rejection: ${inspect(reason)}\n`));
  process.on("uncaughtException", (error) => stderr.write(`Uncaught exception: ${inspect(error)}\n`));
}

main();
