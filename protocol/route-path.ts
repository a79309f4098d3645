/**
 * A container route with an id in its path, written once: the pattern the server routes on
 * (`/api/process/:id/logs`) and, called with an id, the same path for that id (escaped), as callers
 * send it. Both sides import the one constant, so the two cannot drift apart.
 */
export interface IdRoute {
  /** The path with `:id` where the id goes (what the server's router matches). */
  readonly pattern: string;
  /** The path for one id, escaped as a path segment. */
  (id: string): string;
}

export function idRoute(pattern: `${string}:id${string}`): IdRoute {
  const [head, tail] = pattern.split(":id") as [string, string];
  return Object.assign((id: string) => `${head}${encodeURIComponent(id)}${tail}`, { pattern });
}
