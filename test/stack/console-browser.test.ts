/**
 * The web console in a real browser (Debian's chromium driven by puppeteer-core) against the shared
 * `npm start` stack, which turns the console on: paste the token, open a sandbox, run a command and
 * watch its output, edit a file, start and kill a process, type into a terminal over its signed
 * WebSocket, expose a server's port and open its link; then the API reference. Screenshots go to test-output/. That the console is off unless
 * switched on is checked in workerd (test/worker/console.test.ts).
 */
import type { Browser, Page } from "puppeteer-core";
import { launchBrowser, OUTPUT_DIR, waitForText as waitText } from "./browser.ts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../runtime/ports.ts";
import { uniqueId } from "./helpers.ts";
import { previewFetch } from "../preview-fetch.ts";

const STEP_MS = 20_000;

const url = inject("stackUrl");
const token = inject("stackToken");
let browser: Browser;
/** Whatever the pages reported as broken: uncaught errors, refused scripts or styles (CSP), failed loads. */
const problems: string[] = [];

function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers } });
}

async function newPage(): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1000 });
  page.on("pageerror", (error) => problems.push(`page error: ${(error as Error).message}`));
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  return page;
}

const waitForText = (page: Page, selector: string, wanted: string) => waitText(page, selector, wanted, STEP_MS);

/** Until the server behind a preview URL answers (it starts in the background). */
async function waitUntilServing(href: string): Promise<void> {
  const deadline = Date.now() + STEP_MS;
  while ((await previewFetch(href).catch(() => undefined))?.status !== 200) {
    if (Date.now() > deadline) throw new Error(`${href} did not answer 200 in time`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe("web console", () => {
  it("runs a command, edits a file, kills a process, drives a terminal and exposes a port, all from the page", async () => {
    const sandboxId = uniqueId("console");
    const page = await newPage();
    const response = await page.goto(`${url}/`, { waitUntil: "load" });
    expect(response?.status()).toBe(200);

    // Paste the token once; the sandbox picker appears.
    await page.type("#token-input", token);
    await page.click("#token-save");
    await page.waitForSelector("#sandbox-bar:not([hidden])", { timeout: STEP_MS });
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1);

    // Open (and so create) a sandbox.
    await page.type("#sandbox-input", sandboxId);
    await page.click("#sandbox-open");
    await page.waitForSelector("#panels:not([hidden])", { timeout: STEP_MS });
    expect(await page.$eval("#sandbox-state", (element) => element.textContent)).toContain(`${sandboxId}: ready`);

    // Run a command: its output streams in through the signed URL, stderr apart, then its exit code.
    await page.type("#run-command", "echo from-the-browser; echo to-stderr >&2; exit 3");
    await page.click("#run-submit");
    expect(await waitForText(page, "#run-status", "exit code")).toBe("exit code 3");
    expect(await page.$eval("#run-output .stdout", (element) => element.textContent)).toBe("from-the-browser\n");
    expect(await page.$eval("#run-output .stderr", (element) => element.textContent)).toBe("to-stderr\n");

    // A new file, written in the editor and saved, is in the sandbox.
    page.once("dialog", (dialog) => void dialog.accept("note.txt"));
    await page.click("#files-new");
    await page.waitForSelector("#editor:not([hidden])", { timeout: STEP_MS });
    await page.type("#editor-text", "written in a browser\n");
    await page.click("#editor-save");
    expect(await waitForText(page, "#editor-state", "saved")).toBe("saved (21 bytes)");
    await page.waitForSelector('#files-list [data-file="note.txt"]', { timeout: STEP_MS });
    const read = await api(`/v1/sandboxes/${sandboxId}/files/read`, { method: "POST", body: JSON.stringify({ path: "note.txt" }) });
    expect(await read.json()).toMatchObject({ content: "written in a browser\n" });

    // Opening it again shows what the sandbox holds.
    await page.evaluate(() => ((document.querySelector("#editor-text") as HTMLTextAreaElement).value = ""));
    await page.click('#files-list [data-file="note.txt"]');
    await page.waitForFunction(() => (document.querySelector("#editor-text") as HTMLTextAreaElement).value === "written in a browser\n", { timeout: STEP_MS });

    // A background process is listed, and Kill ends it.
    await page.evaluate(() => ((document.querySelector("#run-command") as HTMLInputElement).value = "sleep 300"));
    await page.click("#run-background");
    const startedText = await waitForText(page, "#run-status", "in the background");
    const processId = /started (\S+)/.exec(startedText)![1]!;
    const row = `#processes-list tr[data-process="${processId}"]`;
    await page.waitForSelector(row, { timeout: STEP_MS });
    expect(await page.$eval(row, (element) => element.textContent)).toContain("running");
    await page.click(`${row} button.danger`);
    await page.waitForFunction((selector: string) => !(document.querySelector(selector)?.textContent ?? "").includes("running"), { timeout: STEP_MS }, row);
    const killed = (await (await api(`/v1/sandboxes/${sandboxId}/processes/${processId}`)).json()) as { process: { status: string } };
    expect(killed.process.status).not.toBe("running");

    // A terminal over its signed WebSocket: what is typed runs, and its output comes back.
    await page.click("#terminal-open");
    await waitForText(page, "#terminal-state", "connected");
    await page.waitForFunction(() => /[$#] *$/m.test(document.querySelector(".xterm-rows")?.textContent?.trim() ?? ""), { timeout: STEP_MS });
    await page.keyboard.type("echo hi-$((40+2))");
    await page.keyboard.press("Enter");
    // "hi-42" is the shell's answer: the typed line itself says hi-$((40+2)).
    expect(await waitForText(page, ".xterm-rows", "hi-42")).toContain("echo hi-$((40+2))");

    // A server in the sandbox, exposed from the ports panel: its link opens it in the browser.
    const port = await freePort();
    await page.evaluate((command: string) => ((document.querySelector("#run-command") as HTMLInputElement).value = command), `python3 -m http.server ${port} --bind 127.0.0.1`);
    await page.click("#run-background");
    await waitForText(page, "#run-status", "in the background");
    expect(await page.$eval("#ports-panel", (element) => (element as HTMLElement).hidden)).toBe(false);
    await page.type("#ports-port", String(port));
    await page.click("#ports-form button[type=submit]");
    const link = await page.waitForSelector(`#ports-list [data-port="${port}"] a`, { timeout: STEP_MS });
    const href = await link!.evaluate((anchor) => (anchor as HTMLAnchorElement).href);
    // The port's page is on an origin of its own, never the console's.
    expect(href).toMatch(new RegExp(`^http://${port}-${sandboxId}\\.localhost:${new URL(url).port}/\\?token=`));
    await waitUntilServing(href);
    const preview = await newPage();
    expect((await preview.goto(href, { waitUntil: "load" }))?.status()).toBe(200);
    expect(await preview.$eval("body", (body) => body.textContent)).toContain("note.txt");
    await preview.close();

    expect(await page.$eval("#error", (element) => (element as HTMLElement).hidden)).toBe(true);
    await page.screenshot({ path: `${OUTPUT_DIR}console.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("renders the API reference from the OpenAPI document", async () => {
    const page = await newPage();
    const response = await page.goto(`${url}/v1/docs`, { waitUntil: "load" });
    expect(response?.status()).toBe(200);
    await page.waitForSelector(".swagger-ui .opblock", { timeout: STEP_MS });
    expect(await page.$eval(".swagger-ui .info .title", (element) => element.textContent)).toContain("Sandbox API");
    const paths = await page.$$eval(".swagger-ui .opblock-summary-path", (elements) => elements.map((element) => element.textContent?.replace(/\u200b/g, "")));
    expect(paths).toContain("/v1/sandboxes/{id}/exec");
    await page.screenshot({ path: `${OUTPUT_DIR}docs.png` });
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
