/**
 * Drops a root filesystem's files from the page cache before a container is measured. The kernel
 * charges a cached page to the control group that first read it, so an image whose files earlier
 * tests already read would look lighter in a fresh group than it is on a fresh instance, where every
 * page of a library or binary the server touches is the container's own. Clean pages only, and only
 * those no running process maps; nothing is written. Node has no posix_fadvise: the system Python does it.
 */
import { spawnSync } from "node:child_process";
import { SYSTEM_PYTHON } from "../../scripts/os-packages/packages.ts";

const EVICT = `
import os, sys
for folder, _, files in os.walk(sys.argv[1]):
    for name in files:
        try:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
`;

export function evictFromPageCache(root: string): void {
  const result = spawnSync(SYSTEM_PYTHON, ["-c", EVICT, root], { encoding: "utf8", timeout: 120_000 });
  if (result.status !== 0) throw new Error(`could not drop ${root} from the page cache: ${result.stderr || result.error?.message}`);
}
