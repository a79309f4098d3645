/**
 * fetch for preview URLs from Node. Browsers and curl resolve every `*.localhost` name to loopback;
 * Node's resolver does not, so this connects to 127.0.0.1 itself and sends the URL's host as the Host
 * header (which is how the Worker tells a port's traffic apart). Redirects are not followed. Node's
 * http comes through getBuiltinModule, so this file is typechecked as web code like the other tests.
 */
interface NodeHttp {
  request(
    url: string,
    options: { method: string; headers: Record<string, string>; lookup: (host: string, options: unknown, done: (error: null, address: string, family: number) => void) => void },
    onResponse: (response: NodeResponse) => void,
  ): { on(event: "error", listener: (error: Error) => void): void; end(body?: string): void };
}
interface NodeResponse {
  statusCode?: number;
  rawHeaders: string[];
  on(event: "data", listener: (chunk: Uint8Array) => void): void;
  on(event: "end", listener: () => void): void;
}

const http = (process as unknown as { getBuiltinModule(id: "node:http"): NodeHttp }).getBuiltinModule("node:http");

/** Loopback for every name (only `*.localhost` URLs are sent here). */
export function loopback(_host: string, options: unknown, done: (error: null, address: string, family: number) => void): void {
  const all = (options as { all?: boolean } | undefined)?.all;
  if (all) (done as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address: "127.0.0.1", family: 4 }]);
  else done(null, "127.0.0.1", 4);
}

export function previewFetch(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
  if (!new URL(url).hostname.endsWith(".localhost")) return fetch(url, { redirect: "manual", ...init });
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: init.method ?? "GET", headers: init.headers ?? {}, lookup: loopback }, (response) => {
      const chunks: Uint8Array[] = [];
      response.on("data", (chunk) => chunks.push(chunk));
      response.on("end", () => {
        const headers = new Headers();
        for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) headers.append(response.rawHeaders[i]!, response.rawHeaders[i + 1]!);
        const status = response.statusCode ?? 502;
        const empty = status === 204 || status === 304;
        resolve(new Response(empty ? null : new Blob(chunks.map((chunk) => new Uint8Array(chunk))), { status, headers }));
      });
    });
    request.on("error", reject);
    request.end(init.body);
  });
}
