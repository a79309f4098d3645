/**
 * The paths only Cloudflare's Sandbox SDK uses on a container (its shapes are served by
 * container/http/routes/cloudflare/). Where the SDK's path is one of ours (`/api/execute`,
 * `/api/process/…`, `/api/session`, `/api/ping`), our constants name it; these are the rest.
 */
import { idRoute } from "./route-path.ts";

export const CLOUDFLARE_ROUTES = {
  sessionCreate: "/api/session/create",
  sessionDelete: "/api/session/delete",
  portWatch: "/api/port-watch",
  write: "/api/write",
  read: "/api/read",
  readStream: "/api/read/stream",
  mkdir: "/api/mkdir",
  delete: "/api/delete",
  rename: "/api/rename",
  move: "/api/move",
  listFiles: "/api/list-files",
  exists: "/api/exists",
  contexts: "/api/contexts",
  context: idRoute("/api/contexts/:id"),
  executeCode: "/api/execute/code",
  watch: "/api/watch",
  watchCheck: "/api/watch/check",
  gitCheckout: "/api/git/checkout",
  version: "/api/version",
  commands: "/api/commands",
  backupCreate: "/api/backup/create",
  backupRestore: "/api/backup/restore",
  backupUploadParts: "/api/backup/upload-parts",
} as const;
