/**
 * A page behind a preview port attacks the service's origin, in a real browser (Debian's chromium
 * driven by puppeteer-core) against the shared `npm start` stack: a program in a sandbox serves a
 * hostile page (hostile-preview.ts) on an exposed port that registers a service worker for `/` and
 * sends back every Authorization header it sees, and reads sessionStorage where the console keeps the
 * API token. The user works in the console meanwhile and even opens the port's link in the console's
 * own tab. The token must never reach the program, and the console's origin must end with no
 * service worker of the page's.
 *
 * And a page left open on a preview URL keeps asking its own origin while its sandbox sleeps and is
 * destroyed: its requests are refused (410 stale, then 404) and never wake the sandbox.
 */
import type { Browser, Page } from "puppeteer-core";
import { launchBrowser } from "./browser.ts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { getHttpSandbox } from "../../src/client/http.ts";
import { HOSTILE_PREVIEW_SOURCE } from "./hostile-preview.ts";
import { uniqueId } from "./helpers.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";

const STEP_MS = 20_000;

const url = inject("stackUrl");
const token = inject("stackToken");
const serviceOrigin = new URL(url).origin;
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** The console, signed in with the token and showing the sandbox (its calls carry `Authorization: Bearer`). */
async function useConsole(page: Page, sandboxId: string): Promise<void> {
  // In front, as the tab a user works in (a background tab's animation frames, which waits poll on, stop).
  await page.bringToFront();
  await page.goto(`${url}/`, { waitUntil: "load" });
  if (await page.$eval("#token-input", (element) => !(element as HTMLElement).hidden)) {
    await page.type("#token-input", token);
    await page.click("#token-save");
  }
  await page.waitForSelector("#sandbox-bar:not([hidden])", { timeout: STEP_MS });
  await page.evaluate(() => ((document.querySelector("#sandbox-input") as HTMLInputElement).value = ""));
  await page.type("#sandbox-input", sandboxId);
  await page.click("#sandbox-open");
  await page.waitForSelector("#panels:not([hidden])", { timeout: STEP_MS });
  await page.evaluate(() => ((document.querySelector("#run-command") as HTMLInputElement).value = "echo console-at-work"));
  await page.click("#run-submit");
  await page.waitForFunction(() => (document.querySelector("#run-status")?.textContent ?? "").includes("exit code"), { timeout: STEP_MS });
}

/** `promise`, or a rejection once `ms` passed (a page a worker took over may never answer). */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms))]);
}

/** Opens the hostile page and waits until it has tried everything; answers what it says happened. */
async function openHostilePage(page: Page, href: string): Promise<Record<string, string>> {
  await page.bringToFront();
  await page.goto(href, { waitUntil: "load" });
  await page.waitForFunction(() => document.title === "done", { timeout: STEP_MS });
  return JSON.parse(await page.$eval("#results", (element) => element.textContent ?? "{}")) as Record<string, string>;
}

describe("a hostile page behind a preview port", () => {
  it("cannot register a service worker on the console's origin, intercept its calls or read the token", async () => {
    const sandboxId = uniqueId("hostile");
    const sandbox = getHttpSandbox(sandboxId, { url, token });
    await sandbox.writeFile("hostile.cjs", HOSTILE_PREVIEW_SOURCE);
    const server = await sandbox.startProcess(`exec node hostile.cjs 0 ${serviceOrigin}`);
    const { match } = await server.waitForLog(/listening (\d+)/, 15_000);
    const port = Number((match as RegExpMatchArray)[1]);
    // Public, as an attacker would make it: anyone, the victim included, opens it without a token.
    const { url: previewUrl } = await sandbox.exposePort(port, { public: true });

    // The user signs in to the console; then opens the port's page in another tab.
    const consolePage = await browser.newPage();
    await useConsole(consolePage, sandboxId);
    const hostile = await browser.newPage();
    const results = await openHostilePage(hostile, previewUrl);

    // The user goes on in the console, reloading it, and then follows the port's link in the console's tab.
    const consoleWorks = await within(useConsole(consolePage, sandboxId), STEP_MS * 2).then(
      () => true,
      () => false,
    );
    const consoleControlled = await consolePage.evaluate(() => navigator.serviceWorker.controller !== null);
    await within(openHostilePage(consolePage, previewUrl), STEP_MS * 2).catch(() => undefined);

    // A fresh console tab, and what the program collected.
    const fresh = await browser.newPage();
    await within(fresh.goto(`${url}/`, { waitUntil: "load" }), STEP_MS).catch(() => undefined);
    // The page reports each run as it ends: read until both runs' reports are in, or the step's time is up.
    const readLoot = () => within(hostile.evaluate(async () => (await fetch("loot", { cache: "no-store" })).text()), STEP_MS);
    let loot = await readLoot();
    for (const until = Date.now() + STEP_MS; loot.split('"sessionStorage"').length - 1 < 2 && Date.now() < until; loot = await readLoot()) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const seen = {
      // The page may install a worker for its own origin, never for the console's.
      ownOriginWorker: results.ownOrigin!.startsWith("ok: ") ? new URL(results.ownOrigin!.slice(4)).origin : "none",
      serviceOriginWorker: results.serviceOrigin!.startsWith("refused: ") ? "refused" : results.serviceOrigin,
      consoleWorks,
      consoleControlled,
      freshConsoleControlled: await fresh.evaluate(() => navigator.serviceWorker.controller !== null),
      consoleRegistrations: await fresh.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).map((registration) => registration.scope)),
      workersOnConsoleOrigin: browser
        .targets()
        .filter((target) => target.type() === "service_worker" && new URL(target.url()).origin === serviceOrigin)
        .map((target) => target.url()),
      pageRanTwice: loot.split('"sessionStorage"').length - 1,
      tokenStolen: loot.includes(token),
    };
    expect(seen).toEqual({
      ownOriginWorker: expect.not.stringMatching(new RegExp(`^${serviceOrigin}$`)),
      serviceOriginWorker: "refused",
      consoleWorks: true,
      consoleControlled: false,
      freshConsoleControlled: false,
      consoleRegistrations: [],
      workersOnConsoleOrigin: [],
      pageRanTwice: 2,
      tokenStolen: false,
    });
    await sandbox.destroy();
  }, 120_000);
});

/** Polls `check` until it holds or `timeoutMs` passes. */
async function eventually(check: () => Promise<boolean>, timeoutMs: number, intervalMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, intervalMs))) {
    if (await check()) return true;
  }
  return false;
}

describe("a page left open on an old preview URL", () => {
  it("is refused while its sandbox sleeps (410) and after destroy (404), never waking it; exposed again, the same URL serves", async () => {
    const sandboxId = uniqueId("stale-page");
    const sandbox = getHttpSandbox(sandboxId, { url, token });
    await sandbox.configure({ sleepAfter: "3s" });
    const startServer = async (port = 0) => {
      await sandbox.writeFile("preview-server.cjs", PREVIEW_SERVER_SOURCE);
      // Not work that keeps the sandbox awake: it sleeps after sleepAfter with the server running.
      const server = await sandbox.startProcess(`exec node preview-server.cjs ${port}`, { keepAlive: false });
      const { match } = await server.waitForLog(/listening (\d+)/, 15_000);
      return Number((match as RegExpMatchArray)[1]);
    };
    const port = await startServer();
    const { url: previewUrl } = await sandbox.exposePort(port, { token: "open_page" });

    const page = await browser.newPage();
    await page.bringToFront();
    // The browser trades the token for the port's cookie; the page's own requests carry it from then on.
    expect((await page.goto(previewUrl, { waitUntil: "load" }))?.status()).toBe(200);
    const ask = () =>
      page.evaluate(async () => {
        const answers: string[] = [];
        for (let i = 0; i < 5; i++) {
          const response = await fetch("/info", { cache: "no-store" });
          answers.push(`${response.status} ${response.status === 200 ? "" : ((await response.json()) as { code: string }).code}`.trim());
        }
        return answers;
      });
    expect(await ask()).toEqual(Array(5).fill("200"));

    expect(await eventually(async () => !(await sandbox.status()).running, 30_000, 250)).toBe(true);
    expect(await ask()).toEqual(Array(5).fill("410 STALE_PREVIEW_URL"));
    expect((await page.reload({ waitUntil: "load" }))?.status()).toBe(410);
    expect(await sandbox.status()).toEqual({ running: false, asleep: true });

    // Exposed again in a new container, with its server started again: the open page's URL serves again.
    await startServer(port);
    expect((await sandbox.exposePort(port)).url).toBe(previewUrl);
    expect(await ask()).toEqual(Array(5).fill("200"));

    await sandbox.destroy();
    expect(await ask()).toEqual(Array(5).fill("404 PORT_NOT_EXPOSED"));
    expect((await page.goto(previewUrl, { waitUntil: "load" }))?.status()).toBe(404);
    expect((await sandbox.status()).running).toBe(false);
    await page.close();
  }, 120_000);
});
