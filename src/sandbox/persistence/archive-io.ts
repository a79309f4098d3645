/** The container's archive routes (protocol/archive.ts) from the Durable Object: an archive out as a stream, one in from a stream. */
import { ARCHIVE_MEDIA_TYPE, ARCHIVE_ROUTES, type CreateArchiveRequest, type ExtractArchiveResponse } from "../../../protocol/archive.ts";
import type { ContainerApi } from "../container-api.ts";

/** The tar (gzip'd unless asked otherwise) of the asked paths (default: the whole workspace) as the container makes it. */
export function openArchive(api: ContainerApi, request: CreateArchiveRequest): Promise<ReadableStream<Uint8Array>> {
  return api.stream("POST", ARCHIVE_ROUTES.create, request, { accept: ARCHIVE_MEDIA_TYPE });
}

/** Extracts the stream over the workspace, or the folder `dir` (nothing emptied first); what was written. */
export function extractOver(api: ContainerApi, body: ReadableStream<Uint8Array>, dir?: string): Promise<{ entries: number; bytes: number }> {
  const route = dir === undefined ? ARCHIVE_ROUTES.extract : `${ARCHIVE_ROUTES.extract}?${new URLSearchParams({ dir })}`;
  return api.upload<ExtractArchiveResponse>("PUT", route, body);
}

/** Extracts the stream into the workspace (or the folder `dir`, made when missing) after emptying `paths` there, so they hold exactly the archive's. */
export async function extractReplacing(api: ContainerApi, body: ReadableStream<Uint8Array>, paths: readonly string[], dir?: string): Promise<number> {
  const search = new URLSearchParams({ clear: "true" });
  if (dir !== undefined) search.set("dir", dir);
  for (const path of paths) if (path !== ".") search.append("path", path);
  const { entries } = await api.upload<ExtractArchiveResponse>("PUT", `${ARCHIVE_ROUTES.extract}?${search}`, body);
  return entries;
}
