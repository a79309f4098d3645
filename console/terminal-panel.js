// @ts-check
/**
 * A terminal in the sandbox with xterm.js: POST /terminals makes one the size of the panel, and its
 * signed WebSocket URL (POST /terminals/:tid/ws-url) connects the page to it. Binary frames carry
 * output and keystrokes; text frames are JSON control (`resize` from us; `exit`, `truncated`,
 * `cursor`, `error` from the server).
 */
import { FitAddon } from "/console/vendor/addon-fit.mjs";
import { Terminal } from "/console/vendor/xterm.mjs";
import { callJson, sandboxPath } from "./api.js";
import { byId } from "./dom.js";

/** @param {() => string} sandboxId */
export function terminalPanel(sandboxId) {
  const container = byId("terminal");
  const state = byId("terminal-state");
  const encoder = new TextEncoder();
  /** @type {{ terminal: Terminal, socket: WebSocket | undefined, resizeObserver: ResizeObserver } | undefined} */
  let current;

  async function open() {
    close();
    const terminal = new Terminal({ cursorBlink: true, convertEol: false, fontSize: 13 });
    const fit = new FitAddon();
    terminal.loadAddon(fit);
    terminal.open(container);
    fit.fit();
    const resizeObserver = new ResizeObserver(() => fit.fit());
    resizeObserver.observe(container);
    current = { terminal, socket: undefined, resizeObserver };
    const mine = current;

    state.textContent = "starting…";
    const created = await callJson("POST", sandboxPath(sandboxId(), "/terminals"), { cols: terminal.cols, rows: terminal.rows });
    const id = created.terminal.id;
    const { url } = await callJson("POST", sandboxPath(sandboxId(), `/terminals/${encodeURIComponent(id)}/ws-url`), {});
    if (current !== mine) return;

    const socket = new WebSocket(url);
    socket.binaryType = "arraybuffer";
    mine.socket = socket;
    socket.addEventListener("open", () => {
      state.textContent = `connected (${id})`;
      socket.send(JSON.stringify({ type: "resize", cols: terminal.cols, rows: terminal.rows }));
      terminal.focus();
    });
    socket.addEventListener("message", (message) => {
      if (typeof message.data !== "string") {
        terminal.write(new Uint8Array(message.data));
        return;
      }
      const frame = JSON.parse(message.data);
      if (frame.type === "exit") state.textContent = `exited${frame.exitCode === undefined ? "" : ` (${frame.exitCode})`}${frame.signal ? ` by ${frame.signal}` : ""}`;
      else if (frame.type === "truncated") terminal.write(`\r\n[${frame.droppedBytes} bytes of output no longer kept]\r\n`);
      else if (frame.type === "error") state.textContent = frame.message;
    });
    socket.addEventListener("close", () => {
      if (current === mine && !state.textContent?.startsWith("exited")) state.textContent = "disconnected";
    });
    terminal.onData((data) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(encoder.encode(data));
    });
    terminal.onResize((size) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "resize", cols: size.cols, rows: size.rows }));
    });
  }

  /** Disconnects and removes the terminal from the page (the shell in the sandbox goes on). */
  function close() {
    if (!current) return;
    current.socket?.close();
    current.resizeObserver.disconnect();
    current.terminal.dispose();
    current = undefined;
    container.replaceChildren();
    state.textContent = "";
  }

  return { open, reset: close };
}
