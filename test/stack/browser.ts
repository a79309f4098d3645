/**
 * What the stack's browser tests share: Debian's Chromium launched headless (as root, so without its
 * own sandbox), the folder screenshots go to, and waiting for an element's text. One place, so every
 * page test starts its browser and fails on a missing one the same way.
 */
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import puppeteer, { type Browser, type Page } from "puppeteer-core";

/** Debian's chromium package; CHROMIUM_PATH names another build. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Screenshots of the pages under test, for a person to look at after a run. */
export const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/", import.meta.url));

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no browser at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`);
  mkdirSync(OUTPUT_DIR, { recursive: true });
  // No Chromium sandbox: CI runs as root, where Chromium refuses its own sandbox.
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}

/** Text of an element, once it holds `wanted`. */
export async function waitForText(page: Page, selector: string, wanted: string, timeoutMs: number): Promise<string> {
  await page.waitForFunction((sel: string, text: string) => (document.querySelector(sel)?.textContent ?? "").includes(text), { timeout: timeoutMs }, selector, wanted);
  return page.$eval(selector, (element) => element.textContent ?? "");
}

/** The console's first steps as a user takes them: paste the token, open a sandbox, wait for its panels. */
export async function openSandbox(page: Page, token: string, sandboxId: string, timeoutMs: number): Promise<void> {
  await page.type("#token-input", token);
  await page.click("#token-save");
  await page.waitForSelector("#sandbox-bar:not([hidden])", { timeout: timeoutMs });
  await page.type("#sandbox-input", sandboxId);
  await page.click("#sandbox-open");
  await page.waitForSelector("#panels:not([hidden])", { timeout: timeoutMs });
}
