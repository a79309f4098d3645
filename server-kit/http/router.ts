/**
 * A small route table. Literal segments win over parameters at the same position, so
 * `/api/process/list` and `DELETE /api/process/kill-all` are never taken for an id.
 * Generic over what a handler is given (`C`): each server decides its own request context.
 */

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export type RouteHandler<C> = (ctx: C) => Promise<void> | void;

export interface Route<C> {
  method: HttpMethod;
  /** Literal segments and `:name` parameters, e.g. `/api/process/:id/stream`. */
  path: string;
  handler: RouteHandler<C>;
}

interface CompiledRoute<C> {
  method: HttpMethod;
  segments: string[];
  handler: RouteHandler<C>;
}

export type RouteMatch<C> =
  | { kind: "found"; handler: RouteHandler<C>; params: Record<string, string> }
  | { kind: "method-not-allowed"; allowed: HttpMethod[] }
  | { kind: "not-found" };

export class Router<C> {
  readonly #routes: CompiledRoute<C>[] = [];

  constructor(routes: Iterable<Route<C>> = []) {
    for (const route of routes) this.add(route);
  }

  add(route: Route<C>): void {
    this.#routes.push({ method: route.method, segments: split(route.path), handler: route.handler });
  }

  /** The most literal path match decides: a reserved word (`list`, `kill-all`) is never an id. */
  match(method: string, pathname: string): RouteMatch<C> {
    const segments = split(pathname);
    let bestScore = -1;
    let candidates: { route: CompiledRoute<C>; params: Record<string, string> }[] = [];
    for (const route of this.#routes) {
      const match = matchSegments(route.segments, segments);
      if (!match || match.score < bestScore) continue;
      if (match.score > bestScore) {
        bestScore = match.score;
        candidates = [];
      }
      candidates.push({ route, params: match.params });
    }
    if (candidates.length === 0) return { kind: "not-found" };
    const wanted = method === "HEAD" ? "GET" : method;
    const hit = candidates.find(({ route }) => route.method === wanted);
    if (hit) return { kind: "found", handler: hit.route.handler, params: hit.params };
    return { kind: "method-not-allowed", allowed: [...new Set(candidates.map(({ route }) => route.method))] };
  }
}

function split(path: string): string[] {
  return path.split("/").filter((segment) => segment !== "");
}

/** Score: literal segments count, so the most literal match wins. */
function matchSegments(pattern: string[], path: string[]): { params: Record<string, string>; score: number } | undefined {
  if (pattern.length !== path.length) return undefined;
  const params: Record<string, string> = {};
  let score = 0;
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    const got = path[i]!;
    if (want.startsWith(":")) {
      let value: string;
      try {
        value = decodeURIComponent(got);
      } catch {
        return undefined;
      }
      params[want.slice(1)] = value;
    } else if (want === got) score++;
    else return undefined;
  }
  return { params, score };
}
