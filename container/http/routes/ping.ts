/** Liveness, and the boot id that tells a caller the container was restarted. */
import { INFO_ROUTES } from "../../../protocol/info.ts";
import { sendOk } from "../../../server-kit/http/response.ts";
import type { RouteGroup } from "../types.ts";

export const pingRoutes: RouteGroup = {
  name: "ping",
  routes: [
    {
      method: "GET",
      path: INFO_ROUTES.ping,
      handler: ({ res, server }) =>
        sendOk(res, {
          status: "ok",
          instanceId: server.instanceId,
          uptimeMs: Date.now() - server.startedAt,
          version: server.version,
        }),
    },
  ],
};
