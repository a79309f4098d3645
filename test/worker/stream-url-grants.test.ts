/**
 * What a signed stream URL grants beyond its path: the one run of a process it was minted for (a
 * later process that reuses the id is refused with STREAM_URL_STALE, and a URL stripped of its run is
 * no longer signed), and, for a terminal, view-only sockets that get output but whose input and
 * resize frames are refused with TERMINAL_VIEW_ONLY.
 */
import { exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { apiCall, eventually, uniqueId } from "./helpers.ts";

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

/** Without Authorization, as a browser opens it. */
const open = (url: string, headers: Record<string, string> = {}) => worker.fetch(new Request(url.replace(/^ws/, "http"), { headers }));

async function post(path: string, json: unknown = {}): Promise<any> {
  const response = await apiCall(path, { method: "POST", json });
  expect(response.status, path).toBeLessThan(300);
  return response.json();
}

describe("a stream URL names the process's run", () => {
  it("a log URL minted for one process does not read a later process with the same id", async () => {
    const id = sandboxId("grant-run");
    await post(`/v1/sandboxes/${id}/processes`, { command: "echo first-run; sleep 30", processId: "worker" });
    const { url } = await post(`/v1/sandboxes/${id}/processes/worker/logs/stream-url`);
    expect(new URL(url).searchParams.get("run")).toMatch(/^[0-9a-z]+\.[0-9a-z]+$/);
    const good = await open(url);
    expect(good.status).toBe(200);
    await good.body?.cancel();

    expect((await apiCall(`/v1/sandboxes/${id}/processes/worker?signal=SIGKILL`, { method: "DELETE" })).status).toBe(200);
    expect(await eventually(async () => ((await (await apiCall(`/v1/sandboxes/${id}/processes/worker`)).json()) as any).process.status !== "running", 10_000)).toBe(true);
    expect((await apiCall(`/v1/sandboxes/${id}/processes/cleanup`, { method: "POST" })).status).toBe(200);
    await post(`/v1/sandboxes/${id}/processes`, { command: "echo second-run; sleep 30", processId: "worker" });

    const stale = await open(url);
    expect(stale.status).toBe(410);
    expect(await stale.json()).toMatchObject({ code: "STREAM_URL_STALE", context: { processId: "worker" } });
    // Without its run the URL is no longer what was signed.
    const stripped = new URL(url);
    stripped.searchParams.delete("run");
    expect(await (await open(stripped.href)).json()).toMatchObject({ code: "STREAM_URL_INVALID" });
    // A URL minted now reads the new run.
    const fresh = await post(`/v1/sandboxes/${id}/processes/worker/logs/stream-url`);
    const reader = (await open(fresh.url)).body!.getReader();
    let text = "";
    while (!text.includes("second-run")) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
  });

  it("so does an exec's URL (stream: \"url\"): once its record is gone and the id is taken again, the old URL is stale", async () => {
    const id = sandboxId("grant-exec");
    const first = await post(`/v1/sandboxes/${id}/exec`, { command: "echo one", stream: "url", processId: "job" });
    expect(new URL(first.url).searchParams.get("run")).toBeTruthy();
    const read = await open(first.url);
    expect(read.status).toBe(200);
    expect(await read.text()).toContain("one");
    // Another exec takes the id once the first one's record is cleaned up.
    expect((await apiCall(`/v1/sandboxes/${id}/processes/cleanup`, { method: "POST" })).status).toBe(200);
    const taken = await apiCall(`/v1/sandboxes/${id}/exec`, { method: "POST", json: { command: "echo two; sleep 5", stream: "url", processId: "job" } });
    expect(taken.status, await taken.clone().text()).toBe(202);
    const stale = await open(first.url);
    expect(stale.status).toBe(410);
    expect(await stale.json()).toMatchObject({ code: "STREAM_URL_STALE" });
  });
});

describe("a view-only terminal URL", () => {
  it("receives the output; its input and resize frames are refused, and reach nothing", async () => {
    const id = sandboxId("grant-view");
    const created = await post(`/v1/sandboxes/${id}/terminals`, { command: "stty size; read line; echo got-$line; stty size", cols: 80, rows: 24 });
    const tid = created.terminal.id as string;
    const view = await post(`/v1/sandboxes/${id}/terminals/${tid}/ws-url`, { mode: "view" });
    expect(new URL(view.url).searchParams.get("mode")).toBe("view");
    const response = await open(view.url, { upgrade: "websocket" });
    expect(response.status).toBe(101);
    const socket = response.webSocket!;
    socket.accept();
    const frames: Array<{ type: string; code?: string }> = [];
    let text = "";
    let pending = Promise.resolve();
    socket.addEventListener("message", (event) => {
      if (typeof event.data === "string") frames.push(JSON.parse(event.data));
      else if (event.data instanceof ArrayBuffer) text += new TextDecoder().decode(event.data);
      else pending = pending.then(async () => void (text += new TextDecoder().decode(await (event.data as Blob).arrayBuffer())));
    });
    expect(await eventually(async () => (await pending, text.includes("24 80")), 10_000)).toBe(true);
    socket.send(new TextEncoder().encode("from-viewer\r"));
    socket.send(JSON.stringify({ type: "resize", cols: 100, rows: 30 }));
    const refused = await eventually(async () => frames.filter((f) => f.type === "error").length === 2, 10_000);
    expect(refused, JSON.stringify({ frames, text })).toBe(true);
    expect(frames.filter((f) => f.type === "error")).toEqual([
      expect.objectContaining({ code: "TERMINAL_VIEW_ONLY" }),
      expect.objectContaining({ code: "TERMINAL_VIEW_ONLY" }),
    ]);
    // Neither reached the program: it still waits for its line, at its old size.
    expect(((await (await apiCall(`/v1/sandboxes/${id}/terminals/${tid}`)).json()) as any).terminal).toMatchObject({ status: "running", cols: 80, rows: 24 });
    // The view-only grant cannot be lifted by the query: changing `mode` voids the signature.
    const lifted = view.url.replace("mode=view", "mode=interactive");
    expect(await (await open(lifted, { upgrade: "websocket" })).json()).toMatchObject({ code: "STREAM_URL_INVALID" });
    // An interactive writer still drives it, and the viewer sees that.
    await post(`/v1/sandboxes/${id}/terminals/${tid}/write`, { data: "from-owner\r" });
    expect(await eventually(async () => (await pending, text.includes("got-from-owner")), 10_000)).toBe(true);
    expect(text).not.toContain("got-from-viewer");
    socket.close();
  });
});
