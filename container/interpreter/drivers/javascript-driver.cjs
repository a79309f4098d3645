"use strict";
/**
 * The JavaScript/TypeScript side of a code context: one long-lived Node process that runs cells for
 * the container server, one at a time, in one `vm` context, and reports what each does the moment
 * it happens. Plain CommonJS, run as `node -e` (no file to find inside an isolated sandbox), with
 * `--expose-internals` for the two pieces of Node's own REPL it reuses: its parser (acorn) and its
 * top-level `await` rewrite. The first argument says the language ("typescript": Node's type
 * stripping runs on every cell first).
 *
 * It talks to the server over fd 3 in the frames of the Python driver: a 5-byte header (payload
 * length, big-endian u32; kind: 1 stdout bytes, 2 stderr bytes, 3 a JSON message) and the payload.
 * The server sends `run` {id, code} and `interrupt` {id}; this side sends `ready`, then per cell its
 * output frames, `result` {id, result}, `error` {id, error}, and `done` {id} last.
 *
 * A worker thread reads the channel, so an interrupt is heard while the main thread is busy in a
 * cell: it sends SIGINT to this process, which stops a synchronous cell (`breakOnSigint`) or ends
 * the wait of an asynchronous one. console and process.stdout/stderr of the context write frames,
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
const TYPESCRIPT = process.argv[1] === "typescript";
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

/** What the channel reader runs: frames in, runs to the main thread, interrupts as SIGINT. */
const READER_SOURCE = `
const fs = require("node:fs");
const { parentPort, workerData } = require("node:worker_threads");
const shared = workerData.shared;
const pause = new Int32Array(new SharedArrayBuffer(4));
const numbers = new Map();
let next = 0;
function readExact(size) {
  const buffer = Buffer.allocUnsafe(size);
  let offset = 0;
  while (offset < size) {
    let n;
    try {
      n = fs.readSync(${CONTROL_FD}, buffer, offset, size - offset, null);
    } catch (error) {
      if (error.code !== "EAGAIN") return undefined;
      Atomics.wait(pause, 0, 0, 2);
      continue;
    }
    if (n === 0) return undefined;
    offset += n;
  }
  return buffer;
}
for (;;) {
  const header = readExact(5);
  const payload = header && readExact(header.readUInt32BE(0));
  if (!payload) break;
  if (header[4] !== ${MESSAGE}) continue;
  const message = JSON.parse(payload.toString("utf8"));
  if (message.type === "run") {
    const number = ++next;
    numbers.set(message.id, number);
    if (numbers.size > 64) numbers.delete(numbers.keys().next().value);
    parentPort.postMessage({ ...message, number });
  } else if (message.type === "interrupt") {
    const number = numbers.get(message.id);
    if (number !== undefined && Atomics.load(shared, 0) === number) {
      Atomics.store(shared, 1, number);
      process.kill(process.pid, "SIGINT");
    }
  }
}
parentPort.postMessage({ type: "eof" });
`;

// ── the context the cells run in ───────────────────────────────────────────

/** [0]: number of the cell running now (0: none); [1]: number of the cell an interrupt is for. */
const shared = new Int32Array(new SharedArrayBuffer(8));
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

/**
 * Top-level `let`, `const` and `class` become `var`, so a cell can be run again (a notebook's
 * habit) without "already declared", and its names outlive it like Python's.
 */
function hoistDeclarations(source) {
  if (!repl) return source;
  let program;
  try {
    program = repl.acorn.parse(source, { ecmaVersion: "latest", sourceType: "script", allowAwaitOutsideFunction: true, allowHashBang: true });
  } catch {
    return source; // the real compile reports the syntax error
  }
  const edits = [];
  for (const node of program.body) {
    if (node.type === "VariableDeclaration" && (node.kind === "let" || node.kind === "const")) {
      edits.push({ at: node.start, cut: node.kind.length, text: node.kind === "const" ? "var  " : "var" });
    } else if (node.type === "ClassDeclaration" && node.id) {
      edits.push({ at: node.start, cut: 0, text: `var ${node.id.name} = ` }, { at: node.end, cut: 0, text: ";" });
    }
  }
  for (const edit of edits.reverse()) source = source.slice(0, edit.at) + edit.text + source.slice(edit.at + edit.cut);
  return source;
}

function prepare(code) {
  let source = TYPESCRIPT ? stripTypeScriptTypes(code, { mode: "transform" }) : code;
  source = hoistDeclarations(source);
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

process.on("SIGINT", () => {
  const running = Atomics.load(shared, 0);
  if (running === 0 || Atomics.load(shared, 1) !== running) return;
  Atomics.store(shared, 1, 0);
  rejectWait?.(new InterruptedError());
});

async function evaluate(context, code, number) {
  const { source, async } = prepare(code);
  const filename = path.join(process.cwd(), `cell-${number}.${TYPESCRIPT ? "ts" : "js"}`);
  const script = new vm.Script(source, { filename, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
  const value = script.runInContext(context, { breakOnSigint: true });
  return async ? (await interruptible(value))?.value : value;
}

async function runCell(context, { id, code, number }) {
  runningId = id;
  Atomics.store(shared, 0, number);
  let failure;
  try {
    const value = await evaluate(context, code, number);
    if (value !== undefined) sendResult(value, true);
  } catch (error) {
    failure = { error };
  }
  Atomics.store(shared, 0, 0);
  Atomics.store(shared, 1, 0);
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
