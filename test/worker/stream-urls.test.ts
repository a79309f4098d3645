/**
 * Signed stream URLs through the Worker: minted with the API token, opened without it the way a
 * browser's EventSource and WebSocket do (no Authorization header, Last-Event-ID on reconnect), and
 * refused for anything but the one stream, sandbox and time they were minted for.
 */
import { exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { readSseStream, type SseMessage } from "../../protocol/sse.ts";
import { apiCall, countedLines, countingCommand, eventually, uniqueId } from "./helpers.ts";

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;

const sandboxes: string[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.map((id) => apiCall(`/v1/sandboxes/${id}`, { method: "DELETE" }).catch(() => undefined)));
});

function sandboxId(label: string): string {
  const id = uniqueId(label);
  sandboxes.push(id);
  return id;
}

interface Minted {
  url: string;
  expiresAt: string;
}

/** A request the way a browser sends it: no Authorization, only what the URL carries. */
function open(url: string, headers: Record<string, string> = {}, method = "GET"): Promise<Response> {
  return worker.fetch(new Request(url, { method, headers }));
}

async function mint(path: string, json: unknown = {}): Promise<Minted> {
  const response = await apiCall(path, { method: "POST", json });
  expect(response.status).toBe(200);
  return (await response.json()) as Minted;
}

/** SSE messages of a response until `stop` says so (then the connection is dropped) or the stream ends. */
async function readUntil(response: Response, stop: (messages: SseMessage[]) => boolean = () => false): Promise<SseMessage[]> {
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const messages: SseMessage[] = [];
  for await (const message of readSseStream(response.body!)) {
    messages.push(message);
    if (stop(messages)) break;
  }
  return messages;
}

const stdoutOf = (messages: SseMessage[]) =>
  messages.flatMap((m) => (m.event === "stdout" ? [(JSON.parse(m.data) as { data: string }).data] : [])).join("");
const idsOf = (messages: SseMessage[]) => messages.flatMap((m) => (m.id === undefined ? [] : [Number(m.id)]));

async function refusal(response: Response): Promise<{ status: number; code: string }> {
  return { status: response.status, code: ((await response.json()) as { code: string }).code };
}

async function startProcess(id: string, command: string, processId: string): Promise<void> {
  const started = await apiCall(`/v1/sandboxes/${id}/processes`, { method: "POST", json: { command, processId } });
  expect(started.status).toBe(201);
}

describe("a process log stream URL", () => {
  it("opens without Authorization and resumes after a dropped connection with Last-Event-ID, nothing lost or repeated", async () => {
    const id = sandboxId("url-logs");
    await startProcess(id, countingCommand(60), "counter");
    const before = Date.now();
    const minted = await mint(`/v1/sandboxes/${id}/processes/counter/logs/stream-url`);
    expect(minted.url).toMatch(new RegExp(`^http://sandbox\\.test/v1/sandboxes/${id}/processes/counter/logs/stream\\?`));
    const expiresAt = Date.parse(minted.expiresAt);
    expect(expiresAt).toBeGreaterThan(before + 299_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 300_000);

    const opened = await open(minted.url, { origin: "https://console.example" });
    // EventSource from a page on another origin reads it too: the URL is the grant, not a cookie.
    expect(opened.headers.get("access-control-allow-origin")).toBe("*");
    const first = await readUntil(opened, (messages) => messages.filter((m) => m.event === "stdout").length === 3);
    const lastId = idsOf(first).at(-1)!;
    const rest = await readUntil(await open(minted.url, { "last-event-id": String(lastId) }));
    expect(stdoutOf(first) + stdoutOf(rest)).toBe(countedLines(60));
    const ids = [...idsOf(first), ...idsOf(rest)];
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(rest.at(-1)).toMatchObject({ event: "exit" });
  });

  it("keeps ?since= working beside the signature", async () => {
    const id = sandboxId("url-since");
    await startProcess(id, "echo one; echo two; echo three", "three");
    const minted = await mint(`/v1/sandboxes/${id}/processes/three/logs/stream-url`, { ttlSeconds: 60 });
    const all = await readUntil(await open(minted.url));
    const firstOutput = all.find((m) => m.event === "stdout")!;
    const after = await readUntil(await open(`${minted.url}&since=${firstOutput.id}`));
    expect(stdoutOf([firstOutput]) + stdoutOf(after)).toBe("one\ntwo\nthree\n");
    expect(idsOf(after).every((seq) => seq > Number(firstOutput.id))).toBe(true);
  });

  it("is refused once expired, with STREAM_URL_EXPIRED", async () => {
    const id = sandboxId("url-expired");
    await startProcess(id, "echo hi", "short");
    const minted = await mint(`/v1/sandboxes/${id}/processes/short/logs/stream-url`, { ttlSeconds: 1 });
    expect(await eventually(async () => Date.now() > Date.parse(minted.expiresAt), 3_000, 50)).toBe(true);
    expect(await refusal(await open(minted.url))).toEqual({ status: 401, code: "STREAM_URL_EXPIRED" });
  });

  it("grants nothing else: another pid, sandbox, expiry, signature, route or method is refused with STREAM_URL_INVALID", async () => {
    const id = sandboxId("url-tamper");
    const other = sandboxId("url-tamper-other");
    await startProcess(id, "sleep 30", "mine");
    await startProcess(id, "echo secret; sleep 30", "theirs");
    const { url } = await mint(`/v1/sandboxes/${id}/processes/mine/logs/stream-url`);
    const parsed = new URL(url);
    const signature = parsed.searchParams.get("signature")!;
    const expires = Number(parsed.searchParams.get("expires"));
    const flipped = (signature[0] === "A" ? "B" : "A") + signature.slice(1);
    const variants = [
      url.replace("/processes/mine/", "/processes/theirs/"),
      url.replace(`/sandboxes/${id}/`, `/sandboxes/${other}/`),
      url.replace(`expires=${expires}`, `expires=${expires + 3600}`),
      url.replace(`signature=${signature}`, `signature=${flipped}`),
      url.replace(`signature=${signature}`, `signature=${signature.slice(0, -2)}`),
      url.replace(`signature=${signature}`, "signature=not*base64"),
      url.replace("/logs/stream?", "/logs?"),
      url.replace("/logs/stream?", "?"),
    ];
    for (const variant of variants) {
      expect({ variant, ...(await refusal(await open(variant))) }).toEqual({ variant, status: 401, code: "STREAM_URL_INVALID" });
    }
    expect(await refusal(await open(url, {}, "DELETE"))).toEqual({ status: 401, code: "STREAM_URL_INVALID" });
    // A signature cannot mint more signatures.
    const minting = url.replace("/logs/stream?", "/logs/stream-url?");
    expect(await refusal(await open(minting, {}, "POST"))).toEqual({ status: 401, code: "STREAM_URL_INVALID" });
    // Nothing at all still asks for the token.
    expect(await refusal(await open(`http://sandbox.test${parsed.pathname}`))).toEqual({ status: 401, code: "UNAUTHORIZED" });
    // The untampered URL still works, and the process it names was left running.
    const live = await open(url);
    expect(live.status).toBe(200);
    await live.body!.cancel();
    await apiCall(`/v1/sandboxes/${id}/processes`, { method: "DELETE" });
  });

  it("is minted only for a process that exists, for a time within bounds", async () => {
    const id = sandboxId("url-bad");
    const missing = await apiCall(`/v1/sandboxes/${id}/processes/nope/logs/stream-url`, { method: "POST" });
    expect(await refusal(missing)).toEqual({ status: 404, code: "PROCESS_NOT_FOUND" });
    await startProcess(id, "true", "done");
    for (const ttlSeconds of [0, 3601, 1.5, "60"]) {
      const response = await apiCall(`/v1/sandboxes/${id}/processes/done/logs/stream-url`, { method: "POST", json: { ttlSeconds } });
      expect(await refusal(response)).toEqual({ status: 400, code: "INVALID_REQUEST" });
    }
    const unsigned = await apiCall(`/v1/sandboxes/${id}/processes/done/logs/stream-url`, { method: "POST", headers: { authorization: "Bearer wrong" } });
    expect(await refusal(unsigned)).toEqual({ status: 401, code: "UNAUTHORIZED" });
  });
});

describe("exec with stream: \"url\"", () => {
  it("starts the command at once and answers with a URL of its event stream, resumable with Last-Event-ID", async () => {
    const id = sandboxId("url-exec");
    const response = await apiCall(`/v1/sandboxes/${id}/exec`, { method: "POST", json: { command: countingCommand(40), stream: "url", ttlSeconds: 120 } });
    expect(response.status).toBe(202);
    const started = (await response.json()) as Minted & { processId: string; pid: number };
    expect(started).toMatchObject({ processId: expect.any(String), pid: expect.any(Number) });
    expect(started.url).toBe(new URL(started.url).href);
    expect(new URL(started.url).pathname).toBe(`/v1/sandboxes/${id}/exec/${encodeURIComponent(started.processId)}/stream`);
    expect(Date.parse(started.expiresAt)).toBeGreaterThan(Date.now() + 100_000);

    const first = await readUntil(await open(started.url), (messages) => messages.filter((m) => m.event === "stdout").length === 2);
    expect(first[0]).toMatchObject({ event: "start" });
    expect(JSON.parse(first[0]!.data)).toMatchObject({ processId: started.processId, pid: started.pid });
    const rest = await readUntil(await open(started.url, { "last-event-id": String(idsOf(first).at(-1)) }));
    expect(stdoutOf(first) + stdoutOf(rest)).toBe(countedLines(40));
    const ids = [...idsOf(first), ...idsOf(rest)];
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(JSON.parse(rest.at(-1)!.data)).toMatchObject({ type: "complete", exitCode: 0 });
    // The same signature does not open the process log routes of the same id.
    const logs = started.url.replace(`/exec/${encodeURIComponent(started.processId)}/stream`, `/processes/${encodeURIComponent(started.processId)}/logs/stream`);
    expect(await refusal(await open(logs))).toEqual({ status: 401, code: "STREAM_URL_INVALID" });
  });

  it("refuses what cannot go with it, and ttlSeconds without it", async () => {
    const id = sandboxId("url-exec-bad");
    const kill = await apiCall(`/v1/sandboxes/${id}/exec`, { method: "POST", json: { command: "true", stream: "url", killOnDisconnect: true } });
    expect(await refusal(kill)).toEqual({ status: 400, code: "INVALID_REQUEST" });
    const ttl = await apiCall(`/v1/sandboxes/${id}/exec`, { method: "POST", json: { command: "true", ttlSeconds: 60 } });
    expect(await refusal(ttl)).toEqual({ status: 400, code: "INVALID_REQUEST" });
    const other = await apiCall(`/v1/sandboxes/${id}/exec`, { method: "POST", json: { command: "true", stream: "sse" } });
    expect(await refusal(other)).toEqual({ status: 400, code: "INVALID_REQUEST" });
    const unstartable = await apiCall(`/v1/sandboxes/${id}/exec`, { method: "POST", json: { command: "true", cwd: "/definitely/not/here", stream: "url" } });
    expect(await refusal(unstartable)).toEqual({ status: 422, code: "SPAWN_FAILED" });
    const plain = await apiCall(`/v1/sandboxes/${id}/exec`, { method: "POST", json: { command: "echo still-buffered" } });
    expect(await plain.json()).toMatchObject({ stdout: "still-buffered\n", exitCode: 0 });
  });
});

describe("a terminal WebSocket URL", () => {
  async function createTerminal(id: string, command: string): Promise<string> {
    const created = await apiCall(`/v1/sandboxes/${id}/terminals`, { method: "POST", json: { command, cols: 80, rows: 24 } });
    expect(created.status).toBe(201);
    return ((await created.json()) as { terminal: { id: string } }).terminal.id;
  }

  /** What `new WebSocket(url)` sends: a GET with Upgrade, to the http(s) form of the ws(s) URL. */
  const upgrade = (url: string) => open(url.replace(/^ws/, "http"), { upgrade: "websocket" });

  it("opens a WebSocket without Authorization, from ?since= beside the signature, and sees the output", async () => {
    const id = sandboxId("url-term");
    const tid = await createTerminal(id, "echo before-$((1+1)); read line; echo got-$line");
    const { url, expiresAt } = await mint(`/v1/sandboxes/${id}/terminals/${tid}/ws-url`);
    expect(url).toMatch(new RegExp(`^ws://sandbox\\.test/v1/sandboxes/${id}/terminals/${tid}/ws\\?`));
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    const decoder = new TextDecoder();
    let cursor = 0;
    expect(
      await eventually(async () => {
        const output = (await (await apiCall(`/v1/sandboxes/${id}/terminals/${tid}/output`)).json()) as { data: string; cursor: number };
        cursor = output.cursor;
        return atob(output.data).includes("before-2");
      }, 10_000),
    ).toBe(true);

    const response = await upgrade(`${url}&since=${cursor}`);
    expect(response.status).toBe(101);
    const socket = response.webSocket!;
    socket.accept();
    let text = "";
    let pending = Promise.resolve();
    const exits: unknown[] = [];
    socket.addEventListener("message", (event) => {
      if (typeof event.data === "string") {
        const frame = JSON.parse(event.data) as { type: string };
        if (frame.type === "exit") exits.push(frame);
      } else if (event.data instanceof ArrayBuffer) text += decoder.decode(event.data);
      else pending = pending.then(async () => void (text += decoder.decode(await (event.data as Blob).arrayBuffer())));
    });
    const closed = new Promise<void>((resolve) => socket.addEventListener("close", () => resolve()));
    socket.send(new TextEncoder().encode("by-url\r"));
    await closed;
    await pending;
    expect(text).toContain("got-by-url");
    expect(text).not.toContain("before-2");
    expect(exits).toEqual([expect.objectContaining({ type: "exit", exitCode: 0 })]);
  });

  it("is good for that terminal only, and is minted only for a terminal that exists", async () => {
    const id = sandboxId("url-term-only");
    const mine = await createTerminal(id, "sleep 30");
    const theirs = await createTerminal(id, "sleep 30");
    const { url } = await mint(`/v1/sandboxes/${id}/terminals/${mine}/ws-url`);
    expect(await refusal(await upgrade(url.replace(`/terminals/${mine}/`, `/terminals/${theirs}/`)))).toEqual({ status: 401, code: "STREAM_URL_INVALID" });
    expect(await refusal(await open(url.replace(/^ws/, "http").replace("/ws?", "/output?")))).toEqual({ status: 401, code: "STREAM_URL_INVALID" });
    const missing = await apiCall(`/v1/sandboxes/${id}/terminals/nope/ws-url`, { method: "POST" });
    expect(await refusal(missing)).toEqual({ status: 404, code: "TERMINAL_NOT_FOUND" });
    for (const tid of [mine, theirs]) await apiCall(`/v1/sandboxes/${id}/terminals/${tid}`, { method: "DELETE" });
  });
});

describe("the OpenAPI document", () => {
  it("says how a stream URL is minted and what exec with stream: \"url\" answers", async () => {
    const doc = (await (await apiCall("/v1/openapi.json")).json()) as { paths: Record<string, Record<string, any>>; components: { securitySchemes: Record<string, unknown> } };
    const started = doc.paths["/v1/sandboxes/{id}/exec"]!.post.responses["202"].content["application/json"].schema;
    expect(Object.keys(started.properties).sort()).toEqual(["expiresAt", "pid", "processId", "url"]);
    expect(started.required.sort()).toEqual(["expiresAt", "processId", "url"]);
    for (const path of ["/v1/sandboxes/{id}/processes/{pid}/logs/stream-url", "/v1/sandboxes/{id}/terminals/{tid}/ws-url"]) {
      expect(Object.keys(doc.paths[path]!.post.responses["200"].content["application/json"].schema.properties).sort()).toEqual(["expiresAt", "url"]);
    }
    expect(doc.components.securitySchemes.streamUrl).toMatchObject({ type: "apiKey", in: "query", name: "signature" });
  });
});
