/**
 * The console's network panel in a real browser (Debian's chromium driven by puppeteer-core)
 * against the shared `npm start` stack: a sandbox with network shows its policy as enforced; a
 * policy that is not JSON, and one the service refuses, are shown as errors and change nothing; a
 * valid one is in force; a secret is set and deleted by name, its value never on the page; and a
 * refused connection inside the sandbox appears in the audit trail as it happens. Screenshots go to
 * test-output/.
 */
import type { Browser, Page } from "puppeteer-core";
import { launchBrowser, openSandbox, OUTPUT_DIR, waitForText as waitText } from "./browser.ts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { uniqueId } from "./helpers.ts";

const STEP_MS = 20_000;
const SECRET_VALUE = "never-on-the-page-5521";

const url = inject("stackUrl");
const token = inject("stackToken");
let browser: Browser;
const problems: string[] = [];

function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers } });
}

const waitForText = (page: Page, selector: string, wanted: string) => waitText(page, selector, wanted, STEP_MS);

async function setPolicyText(page: Page, text: string): Promise<void> {
  await page.evaluate((value: string) => ((document.querySelector("#network-policy") as HTMLTextAreaElement).value = value), text);
  // Clicked in the page, not at its place on screen: the panels above it may still be growing as
  // their own answers come in, and a click at the place measured a moment before lands elsewhere.
  await page.$eval("#network-apply", (button) => (button as HTMLButtonElement).click());
}

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe("web console: network panel", () => {
  it("edits the policy with its errors shown, sets and deletes a secret by name, and follows the audit trail live", async () => {
    const sandboxId = uniqueId("console-net");
    const configured = await api(`/v1/sandboxes/${sandboxId}/config`, { method: "PATCH", body: JSON.stringify({ isolation: "bwrap", allowNetwork: true }) });
    expect(configured.status).toBe(204);

    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 1400 });
    page.on("pageerror", (error) => problems.push(`page error: ${(error as Error).message}`));
    page.on("console", (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    await page.goto(`${url}/`, { waitUntil: "load" });
    await openSandbox(page, token, sandboxId, STEP_MS);

    // The policy in force, read back as JSON.
    expect(await waitForText(page, "#network-state", "enforced")).toBe("enforced");
    expect(JSON.parse(await page.$eval("#network-policy", (element) => (element as HTMLTextAreaElement).value))).toEqual({ default: "allow", rules: [], inject: [] });

    // Not JSON, then JSON the service refuses: each error shown, the policy kept.
    await setPolicyText(page, '{"default": "deny",');
    expect(await waitForText(page, "#network-problem", "not JSON")).toMatch(/^not JSON: /);
    await setPolicyText(page, '{"default": "maybe"}');
    expect(await waitForText(page, "#network-problem", "INVALID_REQUEST")).toMatch(/^INVALID_REQUEST: .*default/);
    expect(((await (await api(`/v1/sandboxes/${sandboxId}/network/policy`)).json()) as { policy: { default: string } }).policy.default).toBe("allow");

    // A valid policy is in force, and the error goes away.
    await setPolicyText(page, JSON.stringify({ default: "allow", rules: [{ action: "deny", cidr: "192.0.2.0/24", name: "no-test-net" }] }));
    await page.waitForSelector("#network-problem[hidden]", { timeout: STEP_MS });
    const state = (await (await api(`/v1/sandboxes/${sandboxId}/network/policy`)).json()) as { policy: { rules: unknown[] } };
    expect(state.policy.rules).toEqual([{ action: "deny", cidr: "192.0.2.0/24", name: "no-test-net" }]);

    // A secret by name: set, listed without its value, deleted.
    await page.type("#secret-name", "API_KEY");
    await page.type("#secret-value", SECRET_VALUE);
    await page.click("#secret-form button[type=submit]");
    await page.waitForSelector('#secrets-list [data-secret="API_KEY"]', { timeout: STEP_MS });
    expect(await page.content()).not.toContain(SECRET_VALUE);
    await page.click('#secrets-list [data-secret="API_KEY"] button.danger');
    await page.waitForFunction(() => document.querySelector('#secrets-list [data-secret="API_KEY"]') === null, { timeout: STEP_MS });
    expect(((await (await api(`/v1/sandboxes/${sandboxId}/network/secrets`)).json()) as { secrets: unknown[] }).secrets).toEqual([]);

    // A refused connection inside the sandbox arrives in the audit trail while the page watches.
    const exec = await api(`/v1/sandboxes/${sandboxId}/exec`, { method: "POST", body: JSON.stringify({ command: "(exec 3<>/dev/tcp/192.0.2.1/81) 2>/dev/null; true" }) });
    expect(exec.status).toBe(200);
    const row = await waitForText(page, "#audit-list tr.denied", "no-test-net");
    expect(row).toContain("192.0.2.1:81");
    expect(row).toContain("refused at connect");
    await page.screenshot({ path: `${OUTPUT_DIR}console-network.png`, fullPage: true });

    expect(problems).toEqual([]);
    await page.close();
    await api(`/v1/sandboxes/${sandboxId}`, { method: "DELETE" });
  }, 180_000);
});
