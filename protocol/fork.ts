/**
 * Forks: a new sandbox whose workspace, config and env are those of a live sandbox (or of one of
 * its snapshots), without its processes. The bytes go from the parent's container (or the bucket)
 * straight into the new sandbox's container; nothing passes through the caller.
 */
import * as z from "zod";
import { backupIdSchema } from "./backups.ts";
import { lazySchema } from "./lazy-schema.ts";

export const forkRequestSchema = lazySchema(() => z.strictObject({
  newId: z.string().min(1).describe("The new sandbox's id: one that has never run (409 SANDBOX_EXISTS otherwise)"),
  from: backupIdSchema.optional().describe("A snapshot of this sandbox to fork from (default: its live workspace)"),
}));
export type ForkRequest = z.output<typeof forkRequestSchema>;

export const forkResultSchema = lazySchema(() => z.object({
  id: z.string().describe("The new sandbox"),
  parent: z.string(),
  from: z.string().nullable().describe("The snapshot it was forked from; null: the live workspace"),
  entries: z.number().int().describe("Entries written into the new workspace (files, folders, links)"),
}));
export type ForkResult = z.infer<typeof forkResultSchema>;
