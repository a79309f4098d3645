/**
 * A refused archive as the first call of a new sandbox, through the whole stack as `npm start` runs
 * it (wrangler's dev server in front of the Worker): 24 MiB whose first entry climbs out with `..`.
 * The container refuses it at once; the Durable Object reads on what it left unread, so the request
 * ends whole and the caller gets 400 INVALID_ARCHIVE, not the dev server's "Network connection lost"
 * 500, and the sandbox answers next. A file upload refused before any of its body is read likewise.
 */
import { describe, expect, inject, it } from "vitest";
import { uniqueId } from "./helpers.ts";

/** A ustar header of a file `name` of `size` bytes. */
function tarHeader(name: string, size: number): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0);
  header.write("0000644\0", 100);
  header.write(`${size.toString(8).padStart(11, "0")}\0`, 124);
  header.write(`${Math.floor(Date.now() / 1000).toString(8).padStart(11, "0")}\0`, 136);
  header.write("        ", 148);
  header.write("0", 156);
  header.write("ustar\0", 257);
  header.write("00", 263);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return header;
}

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${inject("stackUrl")}/v1/sandboxes${path}`, { ...init, headers: { authorization: `Bearer ${inject("stackToken")}`, ...init.headers } });
}

describe("a refused archive as a new sandbox's first call", () => {
  it("is 400 INVALID_ARCHIVE through the dev server, and the sandbox answers next", async () => {
    const size = 24 * 1024 * 1024;
    const archive = Buffer.concat([tarHeader("../escape", size), Buffer.alloc(size, 0x61), Buffer.alloc(1024)]);
    for (const id of [uniqueId("refused-first"), uniqueId("refused-first")]) {
      const refused = await api(`/${id}/archive`, { method: "PUT", body: new Uint8Array(archive) });
      expect(refused.headers.get("content-type") ?? "").toMatch(/json/);
      expect({ status: refused.status, body: await refused.json() }).toMatchObject({ status: 400, body: { code: "INVALID_ARCHIVE" } });
      const next = await api(`/${id}/exec`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: "echo next" }) });
      expect(await next.json()).toMatchObject({ stdout: "next\n" });
      await api(`/${id}`, { method: "DELETE" });
    }
  });

  it("so is an upload refused before its body is read: 409 IS_A_DIRECTORY, not a lost connection", async () => {
    const id = uniqueId("refused-upload");
    await api(`/${id}/exec`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: "mkdir -p folder" }) });
    const refused = await api(`/${id}/files/content?path=folder`, { method: "PUT", body: new Uint8Array(24 * 1024 * 1024) });
    expect({ status: refused.status, body: await refused.json() }).toMatchObject({ status: 409, body: { code: "IS_A_DIRECTORY" } });
    await api(`/${id}`, { method: "DELETE" });
  });
});
