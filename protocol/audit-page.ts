/**
 * One page of a bounded audit trail, as every keeper of one answers it (the local runtime's memory,
 * the Durable Object's storage on Cloudflare): entries are numbered from 1, the oldest fall out
 * first, and a reader that asks for what came after `since` learns how many fell out before it read
 * them and where to read on.
 */
import type { AuditEntry, AuditPage } from "./network.ts";

/**
 * `after`: the kept entries after `since`, oldest first, already cut to the page's length;
 * `oldestKept`: the seq of the oldest entry still kept (undefined when none is); `lastSeq`: the
 * highest seq ever given out.
 */
export function auditPageOf(after: readonly AuditEntry[], oldestKept: number | undefined, lastSeq: number, since: number): AuditPage {
  const first = oldestKept ?? lastSeq + 1;
  const dropped = Math.max(0, first - since - 1);
  return { entries: [...after], next: after.at(-1)?.seq ?? Math.max(since, first - 1), dropped };
}
