/** The container server's JSON responses are the server kit's; re-exported for the routes that import them from here. */
export { sendJson } from "../../server-kit/http/response.ts";
