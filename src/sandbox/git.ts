/** The Durable Object's git clone: RPC arguments validated with the protocol schema, forwarded to the container. */
import { gitCloneRequestSchema, GIT_ROUTES, type GitCloneResponse } from "../../protocol/git.ts";
import type { GitCheckoutOptions, GitCheckoutResult } from "../rpc/git.ts";
import type { ContainerApi } from "./container-api.ts";
import { parseRequest } from "./request.ts";

export async function gitCheckout(api: ContainerApi, repoUrl: string, options: GitCheckoutOptions = {}): Promise<GitCheckoutResult> {
  const body = parseRequest(gitCloneRequestSchema, { ...options, repoUrl }, "git checkout request");
  return api.record<GitCloneResponse>("POST", GIT_ROUTES.clone, body);
}
