/**
 * node-tar, loaded with the first archive rather than with the server: it and the zlib and assert
 * modules it pulls in are several milliseconds of every start-up (four times as many on a quarter of
 * a CPU), and most sandboxes never pack or unpack an archive.
 */
let library: Promise<typeof import("tar")> | undefined;

export function loadTar(): Promise<typeof import("tar")> {
  library ??= import("tar");
  return library;
}
