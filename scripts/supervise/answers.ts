/**
 * Whether a service answers over HTTP: one probe with its own timeout, or probes until a deadline.
 * Any HTTP status counts as an answer; only a refused, reset or silent connection does not.
 */
export async function answers(url: string, timeoutMs: number, headers: Record<string, string> = {}): Promise<boolean> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

/** Probes `url` every `everyMs` until it answers (true) or `withinMs` have passed (false). */
export async function answersWithin(url: string, withinMs: number, everyMs = 250): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (await answers(url, Math.min(2_000, Math.max(deadline - Date.now(), 1)))) return true;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return false;
}
