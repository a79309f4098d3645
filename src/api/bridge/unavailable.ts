/**
 * Bridge routes whose capability this service does not have yet: bucket mounts and the warm pool.
 * Each answers 501 with the code `not_implemented` and says what is missing, rather than pretend.
 */
import { Hono } from "hono";
import type { ApiEnv } from "../types.ts";
import { bridgeError } from "./errors.ts";

const notYet = (what: string) => () => bridgeError(501, "not_implemented", `${what} is not available in this sandbox service yet`);

export const bridgeUnavailableRoutes = new Hono<ApiEnv>()
  .post("/mount", notYet("Mounting a bucket"))
  .post("/unmount", notYet("Unmounting a bucket"));

export const bridgePoolRoutes = new Hono<ApiEnv>()
  .get("/stats", notYet("A warm pool"))
  .post("/shutdown-prewarmed", notYet("A warm pool"))
  .post("/prime", notYet("A warm pool"));
