/** The container server answers with the server kit's JSON responses: re-exported for the routes that import them from here. */
export { sendError, sendErrorCode, sendJson, sendOk } from "../../server-kit/http/response.ts";
