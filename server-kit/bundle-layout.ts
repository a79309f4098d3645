/**
 * Where things are in the container server's bundle (container/boot/bundle.ts builds it; the image
 * ships it as /app): the one layout the bundle's builder, the container's own start and the local
 * runtime that launches it all read.
 */

/** The server's entry, relative to the bundle's folder. */
export const BUNDLE_ENTRY = "container/main.js";

/** The image's command: the entry with a scrubbed environment. */
export const BUNDLE_START_SCRIPT = "container/start.sh";

/** The image's startup snapshot: the server loaded, ready to serve (container/boot/snapshot.ts). */
export const BUNDLE_SNAPSHOT = "container/server.blob";
