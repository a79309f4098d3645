/**
 * How deep a JSON text nests, found without parsing it: one pass that skips strings with indexOf
 * (so a body that is mostly one big string costs next to nothing) and counts brackets elsewhere,
 * stopping as soon as the limit is passed. Malformed text is left for JSON.parse to report.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** True when `text` opens more than `maxDepth` arrays or objects inside one another. */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = stringEnd(text, i);
      if (i === -1) return false;
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (++depth > maxDepth) return true;
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/** Index of the quote closing the string opened at `start`, or -1 when it is never closed. */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const close = text.indexOf('"', from);
    if (close === -1) return -1;
    // Escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return close;
    from = close + 1;
  }
}
