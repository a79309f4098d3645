/** File watching as it crosses between a caller and the Sandbox Durable Object or the /v1 API. */
import type { WithoutEnvelope } from "../../protocol/process.ts";
import type { ChangesResponse } from "../../protocol/watch.ts";

export type { WatchEvent } from "../../protocol/watch.ts";

export interface WatchOptions {
  /** Follow subdirectories (default true). */
  recursive?: boolean;
  /** Only entries matching one of these globs (`*`, `**`, `?`). */
  include?: string[];
  /** Leave out entries matching one of these globs (default: .git and node_modules when neither is given). */
  exclude?: string[];
}

export interface ChangesOptions extends WatchOptions {
  /** A version an earlier checkChanges returned. */
  since?: string;
}

export type ChangesResult = WithoutEnvelope<ChangesResponse>;
