/**
 * The network policy's one reading (protocol/network-policy.ts), which the local proxy and the
 * Worker's outbound handler share: host patterns, networks of both families, ports, the order in
 * which rules decide, header injection from secrets, and the schema's refusals.
 */
import { describe, expect, it } from "vitest";
import { networkPolicySchema, parseAddress, parseCidr, type NetworkPolicyInput } from "../../protocol/network.ts";
import { decide, hostMatches, injectionFor, redactSecrets } from "../../protocol/network-policy.ts";

const policy = (input: NetworkPolicyInput) => networkPolicySchema.parse(input);
const to = (names: string[], port = 443, ip?: string) => ({ names, port, ...(ip ? { ip } : {}) });

describe("host patterns", () => {
  it("match a name exactly, or every name under a domain but not the domain itself", () => {
    expect(hostMatches("api.example.com", "API.Example.com.")).toBe(true);
    expect(hostMatches("api.example.com", "xapi.example.com")).toBe(false);
    expect(hostMatches("*.example.com", "a.b.example.com")).toBe(true);
    expect(hostMatches("*.example.com", "example.com")).toBe(false);
    expect(hostMatches("*.example.com", "badexample.com")).toBe(false);
    expect(hostMatches("*.example.com", "example.com.evil.test")).toBe(false);
  });
});

describe("addresses and networks", () => {
  it("parse both families, and read an IPv4-mapped IPv6 address as the IPv4 one", () => {
    expect(parseAddress("10.1.2.3")).toEqual({ family: 4, value: 0x0a010203n });
    expect(parseAddress("::ffff:10.1.2.3")).toEqual({ family: 4, value: 0x0a010203n });
    expect(parseAddress("[2001:db8::1]")).toEqual({ family: 6, value: 0x20010db8000000000000000000000001n });
    for (const bad of ["10.1.2", "10.1.2.256", "01.1.2.3", "1::2::3", "2001:db8:::1", "g::1", "1:2:3:4:5:6:7:8:9"]) expect(parseAddress(bad)).toBeUndefined();
    expect(parseCidr("10.0.0.0/33")).toBeUndefined();
    expect(parseCidr("10.0.0.0/8")).toMatchObject({ bits: 8 });
    expect(parseCidr("2001:db8::/32")).toMatchObject({ family: 6, bits: 32 });
  });

  it("match addresses inside them, of their own family only", () => {
    const p = policy({ default: "allow", rules: [{ action: "deny", cidr: "10.0.0.0/8" }, { action: "deny", cidr: "2001:db8::/32" }] });
    expect(decide(p, to([], 80, "10.200.0.1")).allowed).toBe(false);
    expect(decide(p, to([], 80, "::ffff:10.200.0.1")).allowed).toBe(false);
    expect(decide(p, to([], 80, "11.0.0.1")).allowed).toBe(true);
    expect(decide(p, to([], 80, "2001:db8:ffff::1")).allowed).toBe(false);
    expect(decide(p, to([], 80, "2001:db9::1")).allowed).toBe(true);
    // An address literal used as the host name (https://10.0.0.1/) is the address.
    expect(decide(p, to(["10.0.0.1"], 443)).allowed).toBe(false);
  });
});

describe("deciding", () => {
  const p = policy({
    default: "deny",
    rules: [
      { action: "allow", host: "*.example.com" },
      { action: "allow", host: "db.internal", ports: [5432, "6000-6010"], name: "database" },
      { action: "deny", host: "secret.example.com", name: "no-secret" },
      { action: "allow", cidr: "192.0.2.0/24", ports: [22] },
    ],
  });

  it("lets deny rules win over allow rules, whatever their order", () => {
    expect(decide(p, to(["secret.example.com"]))).toEqual({ allowed: false, rule: "no-secret" });
    expect(decide(p, to(["www.example.com"]))).toEqual({ allowed: true, rule: "rules[0]" });
  });

  it("falls back to the default, and names it", () => {
    expect(decide(p, to(["example.org"]))).toEqual({ allowed: false, rule: "default" });
    expect(decide(policy({ default: "allow" }), to(["example.org"]))).toEqual({ allowed: true, rule: "default" });
  });

  it("holds rules to their ports", () => {
    expect(decide(p, to(["db.internal"], 5432)).allowed).toBe(true);
    expect(decide(p, to(["db.internal"], 6005)).allowed).toBe(true);
    expect(decide(p, to(["db.internal"], 5433)).allowed).toBe(false);
    expect(decide(p, to([], 22, "192.0.2.7")).allowed).toBe(true);
    expect(decide(p, to([], 23, "192.0.2.7")).allowed).toBe(false);
  });

  it("denies a destination when any of its names or its address is denied", () => {
    const q = policy({ default: "allow", rules: [{ action: "deny", host: "evil.test" }, { action: "deny", cidr: "10.0.0.0/8" }] });
    expect(decide(q, to(["fine.test", "evil.test"])).allowed).toBe(false);
    // A name resolving into a denied network (rebinding to an inside address) is denied.
    expect(decide(q, to(["fine.test"], 443, "10.1.1.1")).allowed).toBe(false);
  });
});

describe("injection", () => {
  const p = policy({
    default: "allow",
    inject: [
      { host: "api.example.com", headers: { "X-Api-Key": "key={{ secrets.API_KEY }}", "X-Plain": "yes" } },
      { host: "*.github.test", bearer: "GH" },
      { host: "db.test", basic: { username: "ünï", secret: "DB" }, name: "db-basic" },
    ],
  });
  const secrets = new Map([["API_KEY", "k-123"], ["GH", "ghp_x"], ["DB", "pw"]]);

  it("fills headers from secrets, with bearer and basic helpers", () => {
    expect(injectionFor(p, "api.example.com", 443, secrets)).toEqual({ headers: { "x-api-key": "key=k-123", "x-plain": "yes" }, rule: "inject[0]", missing: [] });
    expect(injectionFor(p, "x.github.test", 443, secrets)?.headers).toEqual({ authorization: "Bearer ghp_x" });
    const basic = injectionFor(p, "db.test", 443, secrets)!;
    expect(basic.rule).toBe("db-basic");
    expect(new TextDecoder().decode(Uint8Array.from(atob(basic.headers.authorization!.slice(6)), (c) => c.charCodeAt(0)))).toBe("ünï:pw");
    expect(injectionFor(p, "other.test", 443, secrets)).toBeUndefined();
  });

  it("sends nothing when a secret it names is not set", () => {
    expect(injectionFor(p, "api.example.com", 443, new Map())).toEqual({ headers: {}, rule: "inject[0]", missing: ["API_KEY"] });
  });

  it("redacts secret values, longest first", () => {
    const both = new Map([["SHORT", "abc"], ["LONG", "abcdef"]]);
    expect(redactSecrets("got abcdef and abc", both)).toBe("got [secret LONG] and [secret SHORT]");
  });
});

describe("the policy schema", () => {
  it("refuses what cannot be meant", () => {
    const bad: unknown[] = [
      { default: "maybe" },
      { default: "deny", rules: [{ action: "allow", host: "a.test", cidr: "10.0.0.0/8" }] },
      { default: "deny", rules: [{ action: "allow", host: "*" }] },
      { default: "deny", rules: [{ action: "allow", host: "a.*.test" }] },
      { default: "deny", rules: [{ action: "allow", cidr: "10.0.0.0/40" }] },
      { default: "deny", rules: [{ action: "allow", ports: ["9-3"] }] },
      { default: "deny", rules: [{ action: "allow", ports: [0] }] },
      { default: "deny", inject: [{ host: "a.test" }] },
      { default: "deny", inject: [{ host: "a.test", headers: { "X-A": "a\r\nX-B: b" } }] },
      { default: "deny", inject: [{ host: "a.test", bearer: "1BAD" }] },
      { default: "deny", extra: true },
    ];
    for (const value of bad) expect(networkPolicySchema.safeParse(value).success, JSON.stringify(value)).toBe(false);
  });

  it("reads host patterns in lower case", () => {
    expect(policy({ default: "deny", rules: [{ action: "allow", host: "API.Example.COM." }] }).rules[0]!.host).toBe("api.example.com");
  });
});

describe("what our resolver answers for", () => {
  it("refuses names denied on every port, keeps names some rule allows", async () => {
    const { resolvable } = await import("../../protocol/network-policy.ts");
    const p = policy({
      default: "deny",
      rules: [
        { action: "allow", host: "*.example.com" },
        { action: "deny", host: "bad.example.com" },
        { action: "deny", host: "smtp.example.com", ports: [25] },
        { action: "allow", cidr: "192.0.2.0/24", ports: [22] },
        { action: "deny", cidr: "10.0.0.0/8" },
      ],
    });
    expect(resolvable(p, "bad.example.com", ["1.1.1.1"])).toMatchObject({ allowed: false, rule: "rules[1]" });
    expect(resolvable(p, "smtp.example.com", ["1.1.1.1"])).toMatchObject({ allowed: true, addresses: ["1.1.1.1"] });
    expect(resolvable(p, "git.other.test", ["192.0.2.9"])).toMatchObject({ allowed: true, addresses: ["192.0.2.9"] });
    expect(resolvable(p, "other.test", ["1.1.1.1"])).toMatchObject({ allowed: false, rule: "default" });
    // A name that resolves inside a denied network is not given out, not even in part.
    expect(resolvable(p, "www.example.com", ["10.0.0.1", "1.1.1.1"])).toMatchObject({ allowed: true, addresses: ["1.1.1.1"] });
    expect(resolvable(p, "www.example.com", ["10.0.0.1"])).toMatchObject({ allowed: false, rule: "rules[4]" });
  });
});
