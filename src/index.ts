/** Worker entry: the /v1 HTTP API, and the Sandbox Durable Object class the platform instantiates. */
import { createApp } from "./api/app.ts";

export { Sandbox } from "./sandbox.ts";
export default createApp();
