/**
 * Tar archives made byte by byte in the test (no tar library in workerd): one regular-file entry
 * whose header names any path (`../escape` included) and whose content is generated as it is read,
 * so a test can send an archive of any size, or one refused mid-body.
 */

/** The 512-byte ustar header of a regular file `name` of `size` bytes. */
export function tarHeader(name: string, size: number): Uint8Array {
  const header = new Uint8Array(512);
  const put = (offset: number, length: number, text: string) => {
    const bytes = new TextEncoder().encode(text);
    header.set(bytes.subarray(0, length), offset);
  };
  const octal = (value: number, length: number) => value.toString(8).padStart(length - 1, "0") + "\0";
  put(0, 100, name);
  put(100, 8, octal(0o644, 8));
  put(108, 8, octal(0, 8));
  put(116, 8, octal(0, 8));
  put(124, 12, octal(size, 12));
  put(136, 12, octal(Math.floor(Date.now() / 1000), 12));
  put(148, 8, "        ");
  put(156, 1, "0");
  put(257, 6, "ustar\0");
  put(263, 2, "00");
  let sum = 0;
  for (const byte of header) sum += byte;
  put(148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return header;
}

/** A tar of one file `name` holding `size` bytes of `fill`, streamed in 64 KiB chunks (then the end blocks). */
export function tarStream(name: string, size: number, fill = 0x61): ReadableStream<Uint8Array> {
  const padded = Math.ceil(size / 512) * 512;
  let sent = -1;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent < 0) {
        controller.enqueue(tarHeader(name, size));
        sent = 0;
        return;
      }
      if (sent >= padded) {
        controller.enqueue(new Uint8Array(1024));
        controller.close();
        return;
      }
      const length = Math.min(64 * 1024, padded - sent);
      const chunk = new Uint8Array(length).fill(fill);
      if (sent + length > size) chunk.fill(0, Math.max(0, size - sent));
      sent += length;
      controller.enqueue(chunk);
    },
  });
}
