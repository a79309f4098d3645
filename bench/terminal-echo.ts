/**
 * Keystroke echo latency of a terminal: one byte typed into a viewer's WebSocket until the program's
 * echo of it comes back on that socket. Through the whole chain (wrangler dev → Worker → Durable
 * Object → container server's WebSocket, opened with a signed ws-url as a browser would) beside the
 * same container server's own WebSocket, in one run. The program is `cat` on a raw, non-echoing
 * PTY, so the echo is written by the program, as a shell's line editor does it.
 */
import WebSocket from "ws";
import type { RuntimeStartAnswer } from "../protocol/runtime.ts";
import { TERMINAL_ROUTES } from "../protocol/terminals.ts";
import { percentile, send, startStack } from "./chain-stack.ts";
import type { BenchModule, BenchTable } from "./types.ts";

const WARMUP = 30;
const KEYSTROKES = 300;
/** Raw mode without echo: each byte reaches `cat` at once and comes back only as its output. */
const ECHO_PROGRAM = "stty raw -echo; printf ready; exec cat";

const ms = (value: number) => `${value.toFixed(2)} ms`;

/** A viewer socket whose binary frames (the terminal's output) are handed to whoever waits for them. */
interface Keyboard {
  /** Types `byte` and resolves with the milliseconds until it comes back. */
  type(byte: string): Promise<number>;
  close(): void;
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Keyboard> {
  const socket = new WebSocket(url, { headers });
  let received = "";
  let waiter: { text: string; resolve: () => void } | undefined;
  const check = () => {
    if (waiter && received.includes(waiter.text)) {
      received = "";
      const { resolve } = waiter;
      waiter = undefined;
      resolve();
    }
  };
  socket.on("message", (data, isBinary) => {
    if (!isBinary) return; // cursor and exit frames
    received += (data as Buffer).toString("latin1");
    check();
  });
  const until = (text: string) =>
    new Promise<void>((resolve) => {
      waiter = { text, resolve };
      check();
    });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  await until("ready");
  return {
    async type(byte) {
      const echoed = until(byte);
      const start = performance.now();
      socket.send(Buffer.from(byte, "latin1"), { binary: true });
      await echoed;
      return performance.now() - start;
    },
    close: () => socket.close(),
  };
}

const bench: BenchModule = {
  name: "terminal-echo",
  async run(): Promise<BenchTable[]> {
    const stack = await startStack();
    try {
      const sandbox = `${stack.url}/v1/sandboxes/bench-echo`;
      const auth = { authorization: `Bearer ${stack.token}` };
      const createTerminal = async () => {
        const reply = await send(`${sandbox}/terminals`, "POST", { command: ECHO_PROGRAM, cols: 80, rows: 24 }, auth);
        if (reply.status !== 201) throw new Error(`terminal not created: ${reply.status} ${reply.body}`);
        return (JSON.parse(reply.body) as { terminal: { id: string } }).terminal.id;
      };
      // One terminal per path, so neither socket sees the other's echoes.
      const chainTerminal = await createTerminal();
      const directTerminal = await createTerminal();
      const minted = await send(`${sandbox}/terminals/${chainTerminal}/ws-url`, "POST", {}, auth);
      if (minted.status !== 200) throw new Error(`ws-url failed: ${minted.status} ${minted.body}`);
      const chain = await connect((JSON.parse(minted.body) as { url: string }).url);
      // The very container server the chain reached (a start of a running container answers with that run and its secret).
      const runtimeAuth = { authorization: `Bearer ${stack.runtimeSecret}` };
      const info = JSON.parse((await send(`${stack.runtimeUrl}/containers/bench-echo/start`, "POST", {}, runtimeAuth)).body) as RuntimeStartAnswer;
      const direct = await connect(`ws://127.0.0.1:${info.ports?.["3000"]}${TERMINAL_ROUTES.ws(directTerminal)}`, { authorization: `Bearer ${info.secret}` });
      try {
        const keys = "abcdefghijklmnopqrstuvwxyz";
        for (let i = 0; i < WARMUP; i++) {
          await chain.type(keys[i % keys.length]!);
          await direct.type(keys[i % keys.length]!);
        }
        const chainTimes: number[] = [];
        const directTimes: number[] = [];
        for (let i = 0; i < KEYSTROKES; i++) {
          // Interleaved, so drift in machine load hits both alike.
          chainTimes.push(await chain.type(keys[i % keys.length]!));
          directTimes.push(await direct.type(keys[i % keys.length]!));
        }
        chainTimes.sort((a, b) => a - b);
        directTimes.sort((a, b) => a - b);
        const chainMedian = percentile(chainTimes, 50);
        const directMedian = percentile(directTimes, 50);
        return [
          {
            title: `Terminal keystroke echo (${KEYSTROKES} × one byte into \`cat\` on a raw PTY, sequential)`,
            baselineLabel: "container server's WebSocket directly",
            rows: [
              { metric: "echo median", ours: ms(chainMedian), baseline: ms(directMedian), target: "≤ 16 ms (within a frame at 60 Hz)", met: chainMedian <= 16 },
              { metric: "echo p99", ours: ms(percentile(chainTimes, 99)), baseline: ms(percentile(directTimes, 99)) },
              { metric: "added by the chain (median)", ours: ms(chainMedian - directMedian), baseline: "—" },
            ],
            notes: [
              "Chain: client → wrangler dev → Worker → Durable Object → container server's WebSocket, opened with a signed ws-url (no Authorization header). Baseline: a second terminal in the same container, viewed over the container server's own WebSocket.",
            ],
          },
        ];
      } finally {
        chain.close();
        direct.close();
      }
    } finally {
      await stack.close();
    }
  },
};

export default bench;
