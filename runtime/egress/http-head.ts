/**
 * The head of an HTTP/1 message (its request or status line, then its header fields), read
 * strictly. The proxy judges a request by its head alone and passes bodies on unparsed, so a head
 * that a server could read otherwise than we do (a bare LF, a folded line, a space before a colon,
 * two Host fields, a version we do not speak) is refused, never guessed at. Where a body ends is
 * decided by http-framing.ts.
 */
import { STATUS_CODES } from "node:http";

/** The largest head read: a longer one is refused (431 from a sandbox, 502 from a server). */
export const MAX_HEAD_BYTES = 64 * 1024;

export type HeaderField = [name: string, value: string];

export interface RequestHead {
  method: string;
  /** The request target as sent (origin-form, absolute-form or `*`). */
  target: string;
  version: "HTTP/1.0" | "HTTP/1.1";
  fields: HeaderField[];
}

export interface ResponseHead {
  version: string;
  status: number;
  reason: string;
  fields: HeaderField[];
}

/** A message the proxy will not pass on; `status` is what the sandbox is answered. */
export class MessageError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) ([\x21-\x7e]+) (HTTP\/1\.[01])$/;
const STATUS_LINE = /^(HTTP\/1\.[01]) (\d{3})(?: ([\t\x20-\x7e\x80-\xff]*))?$/;
/** Control characters a field value may not hold (HTAB is allowed). */
const VALUE_CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
const CR = 13;
const LF = 10;

/**
 * Where the head in `bytes` ends (the index after its empty line), or -1 while it is incomplete.
 * Lines end in CRLF; a bare LF is refused at once rather than waited past. `from` is where the last
 * call stopped looking.
 */
export function headEnd(bytes: Buffer, from: number, status: number): number {
  let lf = bytes.indexOf(LF, from);
  while (lf >= 0) {
    if (lf === 0 || bytes[lf - 1] !== CR) throw new MessageError(status, "a line of the head ends in a bare LF");
    if (lf >= 3 && bytes[lf - 2] === LF && bytes[lf - 3] === CR) return lf + 1;
    lf = bytes.indexOf(LF, lf + 1);
  }
  return -1;
}

export function parseRequestHead(head: Buffer): RequestHead {
  const [line, fields] = splitHead(head, 400);
  const match = REQUEST_LINE.exec(line);
  if (!match) {
    if (/^[^ ]+ [^ ]+ HTTP\/\d+\.\d+$/.test(line)) throw new MessageError(505, `the version of "${line.slice(0, 100)}" is not served (HTTP/1.0 and 1.1 are)`);
    throw new MessageError(400, `not a request line: ${JSON.stringify(line.slice(0, 100))}`);
  }
  return { method: match[1]!, target: match[2]!, version: match[3] as RequestHead["version"], fields };
}

export function parseResponseHead(head: Buffer): ResponseHead {
  const [line, fields] = splitHead(head, 502);
  const match = STATUS_LINE.exec(line);
  if (!match) throw new MessageError(502, `the server's answer has no status line: ${JSON.stringify(line.slice(0, 100))}`);
  return { version: match[1]!, status: Number(match[2]), reason: match[3] ?? "", fields };
}

function splitHead(head: Buffer, status: number): [string, HeaderField[]] {
  const lines = head.toString("latin1", 0, head.length - 4).split("\r\n");
  const fields: HeaderField[] = [];
  for (const line of lines.slice(1)) {
    if (line.startsWith(" ") || line.startsWith("\t")) throw new MessageError(status, "a header field is folded over two lines");
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!TOKEN.test(name)) throw new MessageError(status, `not a header field: ${JSON.stringify(line.slice(0, 100))}`);
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (VALUE_CONTROL.test(value)) throw new MessageError(status, `the header field ${name} holds a control character`);
    fields.push([name, value]);
  }
  const first = lines[0]!;
  if (first.includes("\r")) throw new MessageError(status, "the first line holds a bare CR");
  return [first, fields];
}

/** The values of every field named `name` (any case), in order. */
export function fieldValues(fields: readonly HeaderField[], name: string): string[] {
  const lower = name.toLowerCase();
  return fields.filter(([field]) => field.toLowerCase() === lower).map(([, value]) => value);
}

/** The comma-separated elements of every field named `name`, in lower case. */
export function fieldTokens(fields: readonly HeaderField[], name: string): string[] {
  return fieldValues(fields, name)
    .flatMap((value) => value.split(","))
    .map((token) => token.trim().toLowerCase())
    .filter((token) => token.length > 0);
}

/** A head's bytes: its first line, its fields, the empty line. Values beyond Latin-1 or holding line breaks are refused. */
export function serializeHead(firstLine: string, fields: readonly HeaderField[]): Buffer {
  let text = `${firstLine}\r\n`;
  for (const [name, value] of fields) {
    if (!TOKEN.test(name) || /[\r\n\0]|[^\x00-\xff]/.test(value)) throw new Error(`the header field ${name} cannot be sent`);
    text += `${name}: ${value}\r\n`;
  }
  return Buffer.from(`${text}\r\n`, "latin1");
}

/** An answer of the proxy's own, closing the connection: a status and a line of text saying why. */
export function proxyAnswer(status: number, fields: readonly HeaderField[], body: string): Buffer {
  const length = Buffer.byteLength(body);
  const head = serializeHead(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Refused"}`, [
    ["content-type", "text/plain; charset=utf-8"],
    ...fields,
    ["content-length", String(length)],
    ["connection", "close"],
  ]);
  return Buffer.concat([head, Buffer.from(body)]);
}
