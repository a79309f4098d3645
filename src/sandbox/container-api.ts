/**
 * Calls to the container process server (container/server.ts) from inside the Durable Object, over
 * the container's TCP port. Non-2xx answers become SandboxErrors from their wire code.
 */
import { INFO_ROUTES } from "../../protocol/info.ts";
import { withoutEnvelope, type PingResponse, type SuccessEnvelope, type WithoutEnvelope } from "../../protocol/process.ts";
import { errorFromResponse } from "../rpc/error-response.ts";
import { ContainerUnavailableError } from "../rpc/errors.ts";

export interface PortFetcher {
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
}

const BASE = "http://container";

export class ContainerApi {
  readonly #port: PortFetcher;

  constructor(port: PortFetcher) {
    this.#port = port;
  }

  async #send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body instanceof ReadableStream) {
      // Raw bytes, passed on as they arrive (no length: the container reads to the end).
      init.body = body;
      (init.headers as Record<string, string>)["content-type"] = "application/octet-stream";
    } else if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] = "application/json";
    }
    let response: Response;
    try {
      response = await this.#port.fetch(`${BASE}${path}`, init);
    } catch (error) {
      throw new ContainerUnavailableError(
        `The sandbox's container server is not reachable: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    if (!response.ok) throw await errorFromResponse(response);
    return response;
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.#send(method, path, body, { accept: "application/json" });
    return (await response.json()) as T;
  }

  /** The running container's instance id (its generation), asked of it now. */
  async instanceId(): Promise<string> {
    return (await this.json<PingResponse>("GET", INFO_ROUTES.ping)).instanceId;
  }

  /** The record a JSON answer carries: the response without its envelope (`success`, `timestamp`). */
  async record<R extends SuccessEnvelope>(method: string, path: string, body?: unknown): Promise<WithoutEnvelope<R>> {
    return withoutEnvelope(await this.json<R>(method, path, body));
  }

  /** Sends a raw byte stream as the request body; answers with the record of the JSON result. */
  async upload<R extends SuccessEnvelope>(method: string, path: string, body: ReadableStream<Uint8Array>): Promise<WithoutEnvelope<R>> {
    const response = await this.#send(method, path, body, { accept: "application/json" });
    return withoutEnvelope((await response.json()) as R);
  }

  /** A raw (non-SSE) response with its headers, e.g. a file's bytes; errors arrive as thrown SandboxErrors. */
  async raw(method: string, path: string): Promise<Response> {
    const response = await this.#send(method, path, undefined, { accept: "*/*" });
    if (!response.body) throw new ContainerUnavailableError(`The container answered ${path} without a body`);
    return response;
  }

  /** Opens an SSE stream; errors before the first byte arrive as thrown SandboxErrors. */
  async stream(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ReadableStream<Uint8Array>> {
    const response = await this.#send(method, path, body, { accept: "text/event-stream", ...headers });
    if (!response.body) throw new ContainerUnavailableError(`The container answered ${path} without a body`);
    return response.body;
  }
}
