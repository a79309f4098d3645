/**
 * File operations fail with a ServiceError naming a wire code. System errors (ENOENT, EISDIR, …) are
 * translated once, here, so every operation reports the same code for the same cause.
 */
import type { ErrorCode } from "../../protocol/index.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { SERVER_PROCESS_ERRNO } from "./server-process.ts";

const SYSTEM_CODES: Record<string, { code: ErrorCode; what: string }> = {
  ENOENT: { code: "FILE_NOT_FOUND", what: "no such file or directory" },
  EISDIR: { code: "IS_A_DIRECTORY", what: "is a directory" },
  ENOTDIR: { code: "NOT_A_DIRECTORY", what: "not a directory" },
  EEXIST: { code: "FILE_EXISTS", what: "already exists" },
  ENOTEMPTY: { code: "DIRECTORY_NOT_EMPTY", what: "directory not empty" },
  EACCES: { code: "PERMISSION_DENIED", what: "permission denied" },
  EPERM: { code: "PERMISSION_DENIED", what: "operation not permitted" },
  EROFS: { code: "PERMISSION_DENIED", what: "read-only file system" },
  // What the kernel refuses outside the workspace too: a mount point moved or removed, a running program replaced, a device.
  EBUSY: { code: "PERMISSION_DENIED", what: "device or resource busy (a mount point?)" },
  ETXTBSY: { code: "PERMISSION_DENIED", what: "text file busy" },
  ENXIO: { code: "INVALID_REQUEST", what: "no such device or address" },
  ENODEV: { code: "INVALID_REQUEST", what: "no such device" },
  EOPNOTSUPP: { code: "INVALID_REQUEST", what: "operation not supported here" },
  ELOOP: { code: "PATH_OUTSIDE_WORKSPACE", what: "symbolic link where none is allowed" },
  [SERVER_PROCESS_ERRNO]: { code: "PERMISSION_DENIED", what: "it is the sandbox's server process (its memory, descriptors and environment), which the file API does not serve" },
  ENAMETOOLONG: { code: "INVALID_REQUEST", what: "name too long" },
  EINVAL: { code: "INVALID_REQUEST", what: "invalid argument" },
  ENOSPC: { code: "INSUFFICIENT_STORAGE", what: "no space left on device" },
  EDQUOT: { code: "INSUFFICIENT_STORAGE", what: "disk quota exceeded" },
};

/** Turns whatever an fs call threw into a ServiceError naming the path the caller gave. */
export function toFileError(error: unknown, displayPath: string): ServiceError {
  if (error instanceof ServiceError) return error;
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  const known = errno === undefined ? undefined : SYSTEM_CODES[errno];
  if (known) return new ServiceError(known.code, `${displayPath}: ${known.what}`, { path: displayPath, errno });
  const message = error instanceof Error ? error.message : String(error);
  return new ServiceError("INTERNAL_ERROR", `${displayPath}: ${message}`, { path: displayPath });
}
