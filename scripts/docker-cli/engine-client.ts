/** The docker stand-in's calls to the runtime's Docker engine over its unix socket. */
import { request } from "node:http";

export function engineRequest(socketPath: string, method: string, path: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, headers: { host: "localhost" }, timeout: 10_000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        let body: unknown = text;
        try {
          body = text === "" ? undefined : JSON.parse(text);
        } catch {
          // plain text (/_ping)
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on("timeout", () => req.destroy(new Error("the engine did not answer within 10 s")));
    req.on("error", reject);
    req.end();
  });
}
