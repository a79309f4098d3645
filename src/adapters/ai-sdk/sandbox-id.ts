/**
 * The sandbox id of a harness session. A session with a `sessionId` always gets the same sandbox
 * (`<prefix>-<sessionId>`), so another process resumes it by that id; the id is kept a valid host
 * name (lowercase letters, digits, `-`, at most 52 characters), which host-based port URLs need,
 * and a sessionId that cannot be one as it is becomes a digest of itself. Without a sessionId, a
 * fresh random id.
 */
const MAX_HOST_SAFE_ID = 52;
const HOST_SAFE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export async function sandboxIdFor(prefix: string, sessionId: string | undefined): Promise<string> {
  if (sessionId === undefined) return `${prefix}-${crypto.randomUUID()}`;
  const plain = `${prefix}-${sessionId}`;
  if (plain.length <= MAX_HOST_SAFE_ID && HOST_SAFE.test(plain)) return plain;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(sessionId)));
  const hex = Array.from(digest.subarray(0, 16), (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${prefix}-${hex}`;
}
