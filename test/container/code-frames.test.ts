/**
 * The SSE frames of code runs: records are written into frames as the JSON they are stored as,
 * output from raw bytes; the parsed frames must be exactly the CodeEvents of the log's entries.
 */
import { describe, expect, it } from "vitest";
import { resolveLimits } from "../../container/config.ts";
import { codeFramer } from "../../container/http/streams/code-frames.ts";
import { CodeExecution } from "../../container/interpreter/execution.ts";
import { toCodeEvent } from "../../container/interpreter/events.ts";
import { SseParser } from "../../protocol/sse.ts";

describe("code run frames", () => {
  it("frame every event exactly as toCodeEvent describes it", () => {
    const execution = new CodeExecution("run_1", { id: "ctx_1", language: "python" }, { code: "", timeoutMs: undefined, capture: undefined, interruptOnDisconnect: false, env: undefined }, resolveLimits({ chunkMaxDelayMs: 0 }));
    execution.begin(3);
    execution.output("stdout", Buffer.from('say "hi"\n\ttab 😀'));
    execution.addResult({ text: "'x'", html: "<b>\"x\"</b>", json: { nested: [1, null] }, isMainResult: true });
    execution.output("stderr", Buffer.from("warning\n"));
    execution.addError({ name: "ValueError", value: "bad \"value\"", traceback: ["Traceback (most recent call last):", "ValueError: bad"] });
    execution.finish();

    const items = execution.log.read(0, Infinity).entries;
    const frames = items.map(codeFramer());
    const bytes = Buffer.alloc(frames.reduce((n, frame) => n + frame.byteLength, 0));
    let at = 0;
    for (const frame of frames) at = frame.writeTo(bytes, at);
    expect(at).toBe(bytes.length);
    const messages = new SseParser().push(bytes.toString("utf8"));
    expect(messages.map((message) => message.event)).toEqual(["start", "stdout", "result", "stderr", "error", "complete"]);
    messages.forEach((message, i) => {
      const event = toCodeEvent(items[i]!);
      expect(JSON.parse(message.data)).toEqual(event);
      expect(message.id).toBe(String(event.seq));
    });
    // The error carries `message` (Cloudflare's name) beside `value`, though the interpreter gave only `value`.
    expect(JSON.parse(messages[4]!.data).error).toMatchObject({ value: 'bad "value"', message: 'bad "value"' });
    expect(JSON.parse(messages[5]!.data)).toMatchObject({ type: "complete", executionCount: 3 });
  });
});
