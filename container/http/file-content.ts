/**
 * A whole file as the JSON answer of a read (protocol/files.ts's FileContent in the success
 * envelope), written straight from the file's bytes: the content goes into the answer as a JSON
 * string literal made from the bytes (streams/json-text.ts), never as a JavaScript string of the
 * whole file that JSON.stringify then escapes and the socket encodes again. The answer is the same
 * text `sendOk` would send for `{...file, content: bytes.toString(encoding)}`, fields in that order.
 */
import type { ServerResponse } from "node:http";
import type { FileBytes } from "../files/read.ts";
import { jsonStringOfBase64, jsonStringOfUtf8 } from "./streams/json-text.ts";

export interface FileContentAnswer {
  /** What `encoding` says for utf8 content (another API's shapes say "utf-8"). Default "utf8". */
  utf8Name?: string;
}

export function sendFileContent(res: ServerResponse, file: FileBytes, options: FileContentAnswer = {}): void {
  const { path, bytes, encoding, ...rest } = file;
  const literal = encoding === "base64" ? jsonStringOfBase64(bytes) : jsonStringOfUtf8(bytes);
  const envelope = JSON.stringify({ success: true, timestamp: new Date().toISOString(), path });
  const fields = JSON.stringify({ encoding: encoding === "utf8" ? (options.utf8Name ?? "utf8") : encoding, ...rest });
  // `{…,"path":…}` and `{"encoding":…}` joined around the content: `{…,"path":…,"content":…,"encoding":…}`.
  const head = `${envelope.slice(0, -1)},"content":`;
  const tail = `,${fields.slice(1)}`;
  const headBytes = Buffer.byteLength(head);
  const body = Buffer.allocUnsafe(headBytes + literal.byteLength + Buffer.byteLength(tail));
  body.write(head, 0);
  body.write(tail, literal.writeTo(body, headBytes));
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": body.length });
  res.end(body);
}
