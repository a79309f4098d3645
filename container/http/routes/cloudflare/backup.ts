/**
 * Backups as Cloudflare's Durable Object makes them: `POST /api/backup/create {dir, archivePath,
 * gitignore?, excludes?}` writes an archive of the folder `dir` to the file `archivePath` and answers
 * its `sizeBytes`; `POST /api/backup/restore {dir, archivePath}` puts it back, after which `dir` holds
 * exactly what was saved (as their restore, which mounts the archive over the folder, shows it);
 * `POST /api/backup/upload-parts {archivePath, parts}` sends byte ranges of the archive to presigned
 * part URLs (upload-parts.ts). Their container makes squashfs; ours is our gzip-compressed tar
 * (container/archive/), which only this restore reads: their Durable Object only moves the file's
 * bytes and counts them. Their `compression` choice therefore has no effect. Both paths are found
 * by the safe path walk inside the allowed roots, and the archive is streamed to and from the file.
 */
import { stat } from "node:fs/promises";
import * as z from "zod";
import { sendOk } from "../../../../server-kit/http/response.ts";
import { ServiceError } from "../../../../server-kit/service-error.ts";
import { packArchive } from "../../../archive/pack.ts";
import { unpackArchive } from "../../../archive/unpack.ts";
import { toFileError } from "../../../files/errors.ts";
import { locate } from "../../../files/locate.ts";
import { makeDirectory } from "../../../files/mkdir.ts";
import { isInside, type Access, type PathPolicy } from "../../../files/paths.ts";
import { openFileDownload } from "../../../files/read.ts";
import { writeFileFromStream } from "../../../files/write.ts";
import type { RequestContext, Route } from "../../types.ts";
import { leaveOutTest } from "../../../archive/leave-out.ts";
import { cloudflareRoute } from "./errors.ts";
import { readTheirJson } from "./requests.ts";
import { uploadFileParts } from "./upload-parts.ts";
import { CLOUDFLARE_ROUTES } from "../../../../protocol/cloudflare-routes.ts";
import { lazySchema } from "../../../../protocol/lazy-schema.ts";

const pathSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes("\0"), "paths cannot contain NUL"));

const createRequestSchema = lazySchema(() => z.object({
  dir: pathSchema,
  archivePath: pathSchema,
  gitignore: z.boolean().optional(),
  excludes: z.array(z.string().min(1).max(4096)).max(1024).optional(),
  compression: z.object({ format: z.enum(["gzip", "lz4", "zstd"]).optional(), threads: z.number().int().positive().optional() }).optional(),
}));

const restoreRequestSchema = lazySchema(() => z.object({ dir: pathSchema, archivePath: pathSchema }));

/** S3's limits on a multipart upload: part numbers 1 to 10,000, at most 5 GiB a part. */
const partSchema = lazySchema(() => z.object({
  partNumber: z.number().int().min(1).max(10_000),
  url: z.string().url().refine((url) => /^https?:\/\//i.test(url), "part URLs are http or https"),
  offset: z.number().int().nonnegative(),
  size: z.number().int().nonnegative().max(5 * 1024 ** 3),
}));

const uploadPartsRequestSchema = lazySchema(() => z.object({
  archivePath: pathSchema,
  parts: z
    .array(partSchema)
    .min(1)
    .max(10_000)
    .refine((parts) => new Set(parts.map((part) => part.partNumber)).size === parts.length, "part numbers are distinct"),
}));

/** The real path of the folder `input` names, or NOT_A_DIRECTORY. */
async function folderAt(policy: PathPolicy, input: string, access: Access): Promise<string> {
  const entry = await locate(policy, input, access);
  await entry.dir.close();
  const found = await stat(entry.real).catch((error: unknown) => {
    throw toFileError(error, input);
  });
  if (!found.isDirectory()) throw new ServiceError("NOT_A_DIRECTORY", `${input}: not a directory`, { path: input });
  return entry.real;
}

/** An archive written into the folder it holds would end up inside itself. */
function refuseArchiveInside(policy: PathPolicy, dir: string, archivePath: string): void {
  if (isInside(policy.display(archivePath), policy.display(dir))) {
    throw new ServiceError("INVALID_REQUEST", `${archivePath}: the archive cannot be written inside the folder it holds (${dir})`, { path: archivePath });
  }
}

async function create(ctx: RequestContext): Promise<void> {
  const request = await readTheirJson(ctx, createRequestSchema);
  const { paths } = ctx.server.services;
  refuseArchiveInside(paths, request.dir, request.archivePath);
  const folder = await folderAt(paths, request.dir, "read");
  const leaveOut = await leaveOutTest(folder, { excludes: request.excludes ?? [], gitignore: request.gitignore ?? false });
  // An archive is as large as the folder it holds: the disk is its limit, as for our archive route.
  const written = await writeFileFromStream(paths, request.archivePath, packArchive(folder, ["."], { leaveOut }), { maxBytes: Number.POSITIVE_INFINITY });
  sendOk(ctx.res, { sizeBytes: written.bytesWritten, archivePath: written.path });
}

async function restore(ctx: RequestContext): Promise<void> {
  const request = await readTheirJson(ctx, restoreRequestSchema);
  const { paths } = ctx.server.services;
  // Opened first, so a missing archive fails before anything in the folder is cleared.
  const archive = await openFileDownload(paths, request.archivePath);
  try {
    await makeDirectory(paths, request.dir, { recursive: true });
    const folder = await folderAt(paths, request.dir, "write");
    await unpackArchive(folder, archive.stream, { clear: ["."] });
  } finally {
    archive.stream.destroy();
  }
  sendOk(ctx.res, { dir: paths.display(request.dir) });
}

async function uploadParts(ctx: RequestContext): Promise<void> {
  const request = await readTheirJson(ctx, uploadPartsRequestSchema);
  sendOk(ctx.res, { parts: await uploadFileParts(ctx.server.services.paths, request.archivePath, request.parts) });
}

export const cloudflareBackupRoutes: Route[] = [
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.backupCreate, create),
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.backupRestore, restore),
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.backupUploadParts, uploadParts),
];
