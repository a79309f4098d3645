/**
 * The little of DNS our resolver needs: read one question from a query, and write an answer of IPv4
 * addresses, an empty answer, or a refusal, as RFC 1035 lays them out. Anything else is malformed
 * and gets no answer at all.
 */

export const DNS_TYPES = { A: 1, AAAA: 28 } as const;
export const DNS_RCODES = { noError: 0, formErr: 1, serverFailure: 2, nameError: 3, notImplemented: 4, refused: 5 } as const;

export interface DnsQuestion {
  id: number;
  name: string;
  type: number;
  /** The question section's bytes, echoed in the answer. */
  question: Buffer;
  /** Recursion desired, echoed. */
  flags: number;
}

export function readQuery(message: Buffer): DnsQuestion | undefined {
  if (message.length < 12 || message.length > 512) return undefined;
  const flags = message.readUInt16BE(2);
  // A query (QR 0), standard (opcode 0), one question.
  if (flags & 0x8000 || (flags >> 11) & 0xf || message.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    const length = message[offset];
    if (length === undefined || length > 63) return undefined;
    offset++;
    if (length === 0) break;
    if (offset + length > message.length) return undefined;
    labels.push(message.toString("latin1", offset, offset + length));
    offset += length;
  }
  if (offset + 4 > message.length) return undefined;
  const type = message.readUInt16BE(offset);
  return { id: message.readUInt16BE(0), name: labels.join(".").toLowerCase(), type, question: message.subarray(12, offset + 4), flags };
}

/** An answer to `query`: its addresses (A records, `ttl` seconds) with `rcode`. */
export function writeAnswer(query: DnsQuestion, rcode: number, addresses: readonly string[] = [], ttl = 60): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.id, 0);
  // QR, the query's RD, RA; rcode.
  header.writeUInt16BE(0x8000 | (query.flags & 0x0100) | 0x0080 | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(addresses.length, 6);
  const records = addresses.map((address) => {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    record.writeUInt16BE(DNS_TYPES.A, 2);
    record.writeUInt16BE(1, 4);
    record.writeUInt32BE(ttl, 6);
    record.writeUInt16BE(4, 10);
    address.split(".").forEach((part, index) => record.writeUInt8(Number(part), 12 + index));
    return record;
  });
  return Buffer.concat([header, query.question, ...records]);
}
