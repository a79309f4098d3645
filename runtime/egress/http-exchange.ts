/**
 * A sandbox's HTTP connection (plain, or inside TLS the proxy terminated), served one request at a
 * time. Each request's head is read and judged (judge-request.ts), then sent on with its injected
 * headers; its body and the server's answer pass through as the bytes they are (inbound.ts), only
 * their ends found (http-framing.ts). The next head is read from where the last body ended, so
 * every request on a kept-alive connection is judged, however its bytes were packed. A refusal is
 * answered (403 with the rule; 400 and its like for a head the proxy will not read) and ends the
 * connection, as does anything that goes wrong. Every request goes into the audit trail with its
 * bytes of content each way; secret values are kept out of every error said back.
 */
import type { Socket } from "node:net";
import { EGRESS_HEADER, refusalBody, refusalHeader, UPSTREAM_FAILED } from "../../protocol/egress-refusal.ts";
import { redactSecrets } from "../../protocol/network-policy.ts";
import type { AuditRecord } from "./audit-log.ts";
import type { FlowContext } from "./flow-context.ts";
import { BodyScanner, requestFraming, responseFraming, type Framing } from "./http-framing.ts";
import { fieldTokens, fieldValues, MAX_HEAD_BYTES, MessageError, parseRequestHead, parseResponseHead, proxyAnswer, serializeHead, type RequestHead, type ResponseHead } from "./http-head.ts";
import { Inbound } from "./inbound.ts";
import { answeredFields, auditRecord, factsOf, judgeRequest, passedFields, type Judgement, type RequestFacts } from "./judge-request.ts";
import type { EgressFlows } from "./egress-flows.ts";
import { joinUpgraded } from "./upgrade-forward.ts";
import { UpstreamConnection } from "./upstream-connection.ts";

/** How long a connection may go without a whole request head before it is closed. */
export const HEAD_WAIT_MS = 60_000;

type Allowed = Extract<Judgement, { allowed: true }>;
type Recorder = (fields: Partial<AuditRecord>) => void;

export function serveHttp(egress: EgressFlows, client: Socket, flow: FlowContext): void {
  void new HttpConnection(egress, client, flow).serve();
}

class HttpConnection {
  readonly #egress: EgressFlows;
  readonly #client: Socket;
  readonly #flow: FlowContext;
  readonly #inbound: Inbound;
  /** The connection to the last request's host, kept for the next request to it. */
  #upstream: UpstreamConnection | undefined;
  /** The connection was joined to a server's after a protocol switch: it is the upgrade's now. */
  #joined = false;
  /** A request is on its way: the connection to its server is cut if the sandbox leaves. */
  #busy = false;
  /** The exchange under way, as the sandbox's open flows list it: a policy change judges it again. */
  #untrack: (() => void) | undefined;

  constructor(egress: EgressFlows, client: Socket, flow: FlowContext) {
    this.#egress = egress;
    this.#client = client;
    this.#flow = flow;
    // A client may end its side once its request is sent (shutdown after writing): it still gets the answer.
    client.allowHalfOpen = true;
    client.on("error", () => undefined);
    client.on("timeout", () => client.destroy());
    client.once("close", () => {
      if (this.#busy) this.#upstream?.destroy();
    });
    this.#inbound = Inbound.of(client);
  }

  async serve(): Promise<void> {
    try {
      for (;;) {
        this.#client.setTimeout(HEAD_WAIT_MS);
        const head = await this.#inbound.readHead(MAX_HEAD_BYTES, 400).catch((error: Error) => error);
        this.#client.setTimeout(0);
        if (head === undefined) break;
        if (head instanceof Error) {
          // A head cut short by the connection going away is no request: nothing to answer.
          if (head instanceof MessageError) this.#refuseUnread(head, undefined);
          else this.#client.destroy();
          break;
        }
        this.#busy = true;
        const more = await this.#exchange(head);
        this.#busy = false;
        this.#endExchange();
        if (!more) break;
      }
    } catch {
      this.#upstream?.destroy();
      this.#client.destroy();
    } finally {
      this.#endExchange();
      if (this.#upstream) this.#egress.upstreams.give(this.#upstream);
      if (!this.#joined && !this.#client.writableEnded) this.#client.end();
    }
  }

  /** One request and its answer; whether the connection serves another. */
  async #exchange(headBytes: Buffer): Promise<boolean> {
    let request: RequestHead | undefined;
    let facts: RequestFacts;
    let framing: Framing;
    try {
      request = parseRequestHead(headBytes);
      facts = factsOf(request, this.#flow);
      if (request.method === "CONNECT") throw new MessageError(405, "CONNECT is not served (each connection is judged as it is made)");
      framing = requestFraming(request);
    } catch (error) {
      this.#refuseUnread(error as Error, request);
      return false;
    }
    const passedFor = this.#flow.passedFor;
    if (passedFor && facts.host !== passedFor.host) {
      const reason = `the Worker passed this connection by for ${passedFor.host ?? "no host"}: a request to ${facts.host ?? "no host"} takes a connection of its own`;
      this.#audit(facts, { decision: "denied", rule: "proxy", reason, status: 421 });
      this.#client.end(proxyAnswer(421, [[EGRESS_HEADER, refusalHeader("proxy")]], refusalBody(facts, reason, "proxy")));
      return false;
    }
    const judged = await judgeRequest(this.#egress, facts);
    if (!judged.allowed) {
      this.#audit(facts, { decision: "denied", rule: judged.rule, reason: judged.reason, status: judged.status, ...(judged.ip ? { ip: judged.ip } : {}) });
      this.#client.end(proxyAnswer(judged.status, [[EGRESS_HEADER, refusalHeader(judged.rule)]], refusalBody(facts, judged.reason, judged.rule)));
      return false;
    }
    return this.#forward(request, facts, framing, judged);
  }

  async #forward(request: RequestHead, facts: RequestFacts, framing: Framing, judged: Allowed): Promise<boolean> {
    const upgrade = fieldValues(request.fields, "upgrade").length > 0 && fieldTokens(request.fields, "connection").includes("upgrade");
    const keepAlive = !upgrade && request.version === "HTTP/1.1" && !fieldTokens(request.fields, "connection").includes("close");
    const sent = new BodyScanner(framing, 400);
    const cut = this.#openExchange(judged, facts);
    const record: Recorder = (fields) =>
      this.#audit(facts, { decision: judged.decision, rule: judged.rule, ip: judged.target.host, bytesOut: sent.content, ...(judged.missing ? { reason: judged.missing } : {}), ...fields, ...(cut.reason ? { reason: cut.reason } : {}) });
    const fields = passedFields(request.fields, judged.injected);
    if (upgrade) fields.push(["Connection", "Upgrade"], ["Upgrade", fieldValues(request.fields, "upgrade").join(", ")]);
    else if (!keepAlive) fields.push(["Connection", "close"]);
    let head: Buffer;
    try {
      head = serializeHead(`${request.method} ${facts.target} ${request.version}`, fields);
    } catch (error) {
      return this.#failed(record, 502, redactSecrets((error as Error).message, this.#egress.secrets));
    }

    const upstream = this.#upstreamFor(judged, facts);
    upstream.socket.write(head);
    let bodyError: Error | undefined;
    const sending = this.#inbound.relay(sent, upstream.socket).catch(
      (error: Error) => {
        bodyError = error;
        upstream.destroy();
      },
    );

    let answer: ResponseHead;
    let answerFraming: Framing;
    try {
      answer = await this.#answerHead(upstream, request);
      if (answer.status === 101 && !upgrade) throw new MessageError(502, "the server switched protocols unasked");
      answerFraming = answer.status === 101 ? { kind: "none" } : responseFraming(answer, request.method);
    } catch (error) {
      upstream.destroy();
      // The request's own body failing (malformed, or the sandbox leaving) is what cut the server off.
      if (bodyError) return this.#failed(record, bodyError instanceof MessageError ? bodyError.status : 400, `the request's body: ${bodyError.message}`);
      if (error instanceof MessageError) return this.#failed(record, error.status, error.message);
      return this.#failed(record, 502, this.#upstreamFailure(error as Error));
    }

    if (answer.status === 101) {
      await sending;
      if (bodyError) return this.#failed(record, 400, `the request's body: ${(bodyError as Error).message}`);
      this.#client.write(serializeHead(`HTTP/1.1 101 ${answer.reason}`, answer.fields));
      this.#upstream = undefined;
      this.#joined = true;
      joinUpgraded(this.#egress, { client: this.#client, clientIn: this.#inbound, upstream, host: judged.host, ip: judged.target.host, port: facts.port }, (joined) => record({ status: 101, ...joined }));
      return false;
    }

    const keepClient = keepAlive && answerFraming.kind !== "close";
    this.#client.write(serializeHead(`HTTP/1.1 ${answer.status} ${answer.reason}`, [...answeredFields(answer.fields), ...(keepClient ? [] : [["Connection", "close"] as [string, string]])]));
    const received = new BodyScanner(answerFraming, 502);
    try {
      await upstream.inbound.relay(received, this.#client);
    } catch (error) {
      record({ status: answer.status, bytesIn: received.content, ...(this.#client.destroyed ? {} : { reason: error instanceof MessageError ? error.message : this.#upstreamFailure(error as Error) }) });
      upstream.destroy();
      this.#client.destroy();
      return false;
    }
    const reusable = answer.version === "HTTP/1.1" && answerFraming.kind !== "close" && !fieldTokens(answer.fields, "connection").includes("close");
    if (!reusable || !keepAlive) upstream.retire();
    record({ status: answer.status, bytesIn: received.content, ...(bodyError ? { reason: `the request's body: ${(bodyError as Error).message}` } : {}) });
    // An answer that came before the whole request did (the server did not wait for it) ends the connection.
    if (!sent.done) {
      upstream.destroy();
      return false;
    }
    return keepClient;
  }

  /**
   * Lists the exchange among the sandbox's open flows until it ends: a policy change that denies its
   * host now cuts it, both ways, mid-body (a download streaming in, an upload streaming out), as it
   * cuts raw TCP and WebSockets. What cut it is kept for the audit entry.
   */
  #openExchange(judged: Allowed, facts: RequestFacts): { reason?: string } {
    const cut: { reason?: string } = {};
    this.#untrack = this.#egress.track({
      names: [judged.host],
      ip: judged.target.host,
      port: facts.port,
      cut: (why) => {
        cut.reason = why;
        this.#upstream?.destroy();
        this.#client.destroy();
      },
    });
    return cut;
  }

  #endExchange(): void {
    this.#untrack?.();
    this.#untrack = undefined;
  }

  /** The server's answer's head; interim (1xx) answers before it are passed on to an HTTP/1.1 client. */
  async #answerHead(upstream: UpstreamConnection, request: RequestHead): Promise<ResponseHead> {
    for (;;) {
      const bytes = await upstream.inbound.readHead(MAX_HEAD_BYTES, 502);
      if (!bytes) throw new Error("the server closed the connection without answering");
      const answer = parseResponseHead(bytes);
      if (answer.status >= 200 || answer.status === 101) return answer;
      if (request.version === "HTTP/1.1") this.#client.write(serializeHead(`HTTP/1.1 ${answer.status} ${answer.reason}`, answeredFields(answer.fields)));
    }
  }

  #upstreamFor(judged: Allowed, facts: RequestFacts): UpstreamConnection {
    const tlsName = facts.tls ? judged.host : undefined;
    const key = UpstreamConnection.keyOf(judged.target, tlsName);
    const kept = this.#upstream;
    if (kept?.key === key && kept.reusable) return kept;
    if (kept) this.#egress.upstreams.give(kept);
    this.#upstream = this.#egress.upstreams.take(key) ?? UpstreamConnection.dial(judged.target, tlsName, this.#egress.testHosts);
    return this.#upstream;
  }

  /** A request that went wrong before its answer began: said back, recorded, and the connection ended. */
  #failed(record: Recorder, status: number, reason: string): false {
    record({ status, reason });
    const said = status === 502 ? UPSTREAM_FAILED : refusalHeader("proxy");
    this.#client.end(proxyAnswer(status, [[EGRESS_HEADER, said]], `egress: ${status === 502 ? "the server failed" : "refused"}: ${reason}\n`));
    return false;
  }

  /** A head the proxy will not read: refused with its status, recorded with what is known of it. */
  #refuseUnread(error: Error, request: RequestHead | undefined): void {
    const status = error instanceof MessageError ? error.status : 400;
    const facts: RequestFacts = {
      host: undefined,
      port: this.#flow.destination.port,
      tls: this.#flow.serverName !== undefined,
      serverName: this.#flow.serverName,
      method: request?.method ?? "?",
      path: request?.target.split("?")[0]?.slice(0, 200) ?? "?",
      target: "",
    };
    this.#audit(facts, { decision: "denied", rule: "proxy", status, reason: `unreadable request: ${error.message}` });
    this.#client.end(proxyAnswer(status, [[EGRESS_HEADER, refusalHeader("proxy")]], `egress refused an unreadable request: ${error.message}\n`));
  }

  #upstreamFailure(error: Error): string {
    return redactSecrets(`upstream: ${(error as NodeJS.ErrnoException).code ?? error.message}`, this.#egress.secrets);
  }

  #audit(facts: RequestFacts, fields: Partial<AuditRecord> & Pick<AuditRecord, "decision" | "rule">): void {
    this.#egress.audit.add(auditRecord(facts, fields));
  }
}
