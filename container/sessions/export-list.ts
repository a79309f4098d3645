/**
 * Parses the output of bash's `export -p`: one `declare -x NAME="value"` per exported variable, with
 * values in double quotes (`\` escapes `\ " $ \``) or, when they hold control characters, in ANSI-C
 * quotes (`$'…'`). A variable exported without a value (`declare -x NAME`) is not in the environment
 * and is left out. `export -p` is a single builtin write, far cheaper than listing variables one by one.
 */

/** `declare -x NAME`, or `export NAME` when the command left bash in POSIX mode. */
const DECLARE = /(?:declare -[A-Za-z]+|export) ([A-Za-z_][A-Za-z0-9_]*)/y;

export function parseExportList(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  let pos = 0;
  while (pos < text.length) {
    if (text[pos] === "\n" || text[pos] === " ") {
      pos++;
      continue;
    }
    DECLARE.lastIndex = pos;
    const match = DECLARE.exec(text);
    if (!match) throw new Error(`unexpected export -p output at ${pos}`);
    pos = DECLARE.lastIndex;
    if (text[pos] !== "=") continue;
    pos++;
    let value: string;
    if (text[pos] === '"') [value, pos] = doubleQuoted(text, pos + 1);
    else if (text.startsWith("$'", pos)) [value, pos] = ansiQuoted(text, pos + 2);
    else {
      const end = text.indexOf("\n", pos);
      value = text.slice(pos, end === -1 ? text.length : end);
      pos = end === -1 ? text.length : end;
    }
    env[match[1]!] = value;
  }
  return env;
}

function doubleQuoted(text: string, start: number): [string, number] {
  let value = "";
  let pos = start;
  while (pos < text.length) {
    const char = text[pos]!;
    if (char === '"') return [value, pos + 1];
    if (char === "\\" && pos + 1 < text.length && '\\"$`\n'.includes(text[pos + 1]!)) {
      value += text[pos + 1];
      pos += 2;
      continue;
    }
    value += char;
    pos++;
  }
  throw new Error("unterminated double-quoted value in export -p output");
}

const SIMPLE_ESCAPES: Record<string, number> = { a: 7, b: 8, e: 27, E: 27, f: 12, n: 10, r: 13, t: 9, v: 11, "\\": 92, "'": 39, '"': 34, "?": 63 };

/** `$'…'`: escapes may spell raw bytes (\177, \xff), so the value is assembled as bytes, then decoded. */
function ansiQuoted(text: string, start: number): [string, number] {
  const bytes: number[] = [];
  let pos = start;
  const encoder = new TextEncoder();
  while (pos < text.length) {
    const char = text[pos]!;
    if (char === "'") return [Buffer.from(bytes).toString("utf8"), pos + 1];
    if (char !== "\\") {
      const codePoint = text.codePointAt(pos)!;
      const literal = String.fromCodePoint(codePoint);
      bytes.push(...encoder.encode(literal));
      pos += literal.length;
      continue;
    }
    const next = text[pos + 1] ?? "";
    pos += 2;
    if (next in SIMPLE_ESCAPES) {
      bytes.push(SIMPLE_ESCAPES[next]!);
    } else if (/[0-7]/.test(next)) {
      const digits = /^[0-7]{0,2}/.exec(text.slice(pos))![0];
      bytes.push(Number.parseInt(next + digits, 8) & 0xff);
      pos += digits.length;
    } else if (next === "x") {
      const digits = /^[0-9a-fA-F]{1,2}/.exec(text.slice(pos))?.[0] ?? "";
      if (digits === "") bytes.push(92, 120);
      else bytes.push(Number.parseInt(digits, 16));
      pos += digits.length;
    } else if (next === "u" || next === "U") {
      const digits = new RegExp(`^[0-9a-fA-F]{1,${next === "u" ? 4 : 8}}`).exec(text.slice(pos))?.[0] ?? "";
      bytes.push(...encoder.encode(digits === "" ? `\\${next}` : String.fromCodePoint(Number.parseInt(digits, 16))));
      pos += digits.length;
    } else if (next === "c" && pos < text.length) {
      bytes.push(text.charCodeAt(pos) & 0x1f);
      pos++;
    } else {
      bytes.push(92, ...encoder.encode(next));
    }
  }
  throw new Error("unterminated $'…' value in export -p output");
}
