/**
 * Temporary credentials: a credentials provider (option "credentials" as a function) against the
 * in-process fake, which answers a request carrying an expired session token 400 ExpiredToken as
 * AWS S3 does. Key rotation against a real gateway is in s3-ceph.test.ts.
 */
import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadWithRecords } from "../../src/durability/persistence";
import type { S3Credentials } from "../../src/s3/index";
import { s3Persistence } from "../../src/s3/index";
import { FakeClock } from "../../src/util/clock";
import { kvRecord, range } from "../durability/adapter-contract";
import { FakeS3 } from "./fake-s3";
import { freshPrefix, optionsFor, quickClockOn, type S3Target } from "./s3-harness";
import { rejection } from "./s3-suite";

const SECRET = "provider-secret-Jf7Qw2Xn9Lk4Pz";
let s3: FakeS3;
let target: S3Target;

beforeAll(async () => {
  s3 = await FakeS3.start({ accessKeyId: "AKFAKE" });
  target = { endpoint: s3.endpoint, bucket: "objects", accessKeyId: "AKFAKE", secretAccessKey: SECRET };
});
afterAll(async () => {
  await s3.close();
});

/** A provider of numbered session tokens; `expire()` makes every token handed out so far expired. */
let providers = 0;
function tokens(expiration?: (n: number) => Date | undefined) {
  const issued: string[] = [];
  const id = ++providers;
  const provider = async (): Promise<S3Credentials> => {
    const token = `token-${id}-${issued.length + 1}-Vq8Ls3Kd`;
    issued.push(token);
    const credentials: S3Credentials = { accessKeyId: "AKFAKE", secretAccessKey: SECRET, sessionToken: token };
    const at = expiration?.(issued.length);
    if (at !== undefined) credentials.expiration = at;
    return credentials;
  };
  return {
    issued,
    provider,
    expire: () => {
      for (const t of issued) s3.expiredTokens.add(t);
    },
  };
}

const tokenOf = (r: { headers: Record<string, unknown> }) => r.headers["x-amz-security-token"];

describe("s3 (fake): a credentials provider", () => {
  it("is called once for many requests, and again 5 minutes before its credentials' expiration (injected clock)", async () => {
    const fake = new FakeClock(Date.UTC(2026, 0, 1));
    const t = tokens(() => new Date(fake.now() + 60 * 60_000));
    const a = s3Persistence(
      optionsFor(target, freshPrefix("expiry"), { credentials: t.provider, clock: quickClockOn(fake) }),
    );
    await a.load();
    for (const s of range(1, 5)) await a.append([kvRecord(s)]);
    expect(t.issued).toHaveLength(1);
    await fake.advance(54 * 60_000);
    await a.append([kvRecord(6)]);
    expect(t.issued).toHaveLength(1);
    await fake.advance(60_001);
    await a.append([kvRecord(7)]);
    expect(t.issued).toHaveLength(2);
    // Every request since was signed with the new token.
    const last = s3.log[s3.log.length - 1] as { headers: Record<string, unknown> };
    expect(tokenOf(last)).toBe(t.issued[1]);
  });

  it("credentials the store says expired (400 ExpiredToken) are fetched again once and the request sent again: appends and a HEAD-only check go on, nothing is written twice", async () => {
    const prefix = freshPrefix("expired");
    const t = tokens();
    const a = s3Persistence(optionsFor(target, prefix, { credentials: t.provider }));
    await a.load();
    await a.append([kvRecord(1)]);
    t.expire();
    await a.append([kvRecord(2)]);
    expect(t.issued).toHaveLength(2);
    t.expire();
    // A HEAD's answer has no body: a 400 to it is taken as possibly expired credentials.
    await (a as unknown as { verifyHolder(): Promise<void> }).verifyHolder();
    expect(t.issued).toHaveLength(3);
    t.expire();
    await a.append([kvRecord(3)]);
    const b = s3Persistence(optionsFor(target, prefix, { readOnly: true }));
    expect((await loadWithRecords(b)).records).toEqual([kvRecord(1), kvRecord(2), kvRecord(3)]);
    // fence + three log objects: the refused PUTs did not land, the resent ones did, once each.
    expect(s3.keys("objects", `${prefix}log/`)).toHaveLength(4);
  });

  it("concurrent requests refused together share one call of the provider", async () => {
    const prefix = freshPrefix("shared");
    const writer = s3Persistence(optionsFor(target, prefix, { compactAfterObjects: 1000 }));
    await writer.load();
    for (const s of range(1, 24)) await writer.append([kvRecord(s)]);
    const t = tokens();
    const view = s3Persistence(optionsFor(target, prefix, { readOnly: true, credentials: t.provider }));
    await view.load();
    await view.close();
    t.expire();
    const before = s3.log.length;
    // The stream reads 8 log objects at a time: they are all refused with the same token.
    expect((await view.readRecords(0, 24)).map((r) => r.seq)).toEqual(range(1, 24));
    expect(t.issued).toHaveLength(2);
    const refused = s3.log.slice(before).filter((r) => tokenOf(r) === t.issued[0]);
    expect(refused.length).toBeGreaterThan(1);
  });

  it("never loops: a provider that keeps returning refused credentials fails the request after one more call, naming the code, without secrets", async () => {
    const t = tokens();
    const a = s3Persistence(optionsFor(target, freshPrefix("always-expired"), { credentials: t.provider }));
    await a.load();
    const provider = async () => {
      const c = await t.provider();
      t.expire();
      return c;
    };
    const b = s3Persistence(optionsFor(target, freshPrefix("always-expired"), { credentials: provider, retries: 3 }));
    const error = (await rejection(b.load())) as Error & { code?: string };
    expect(error.code).toBe("ERR_WRITE_FAILED");
    expect(error.message).toMatch(
      /HTTP 400 ExpiredToken\. The store refused the credentials \(ExpiredToken\) also after/,
    );
    // The probe's PUT is sent twice (its credentials fetched, refused, fetched again: 400 is not
    // transient) and fails. Nothing else was sent.
    expect(b.stats().requests).toMatchObject({ PUT: 2, DELETE: 0, GET: 0, HEAD: 0 });
    expect(t.issued).toHaveLength(1 + 2);
    const shown = `${error.message} ${inspect(error, { depth: 10, showHidden: true })}`;
    for (const secret of [SECRET, ...t.issued]) expect(shown).not.toContain(secret);
  });

  it("fixed credentials that expire are not fetched again, and the error says to pass a function", async () => {
    const t = tokens();
    const fixed = await t.provider();
    t.expire();
    const a = s3Persistence(optionsFor(target, freshPrefix("fixed-expired"), { credentials: fixed }));
    const error = (await rejection(a.load())) as Error;
    expect(error.message).toMatch(/ExpiredToken.*fixed credentials are never fetched again.*pass a function/);
    expect(error.message).not.toContain(fixed.sessionToken as string);
  });

  it("a result that cannot go into a header is a TypeError naming the property, never its value", async () => {
    for (const bad of [
      { accessKeyId: "AKFAKE\n", secretAccessKey: SECRET },
      { accessKeyId: "AKFAKE", secretAccessKey: SECRET, sessionToken: "token-Qx7\nrest" },
      { accessKeyId: "AKFAKE", secretAccessKey: SECRET, sessionToken: "token-Qx7 rest" },
    ]) {
      const a = s3Persistence(
        optionsFor(target, freshPrefix("bad-result"), { credentials: async () => bad, retries: 0 }),
      );
      const error = await rejection(a.load());
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(
        bad.sessionToken === undefined
          ? /provider.*"credentials\.accessKeyId"/
          : /provider.*"credentials\.sessionToken"/,
      );
      const shown = `${inspect(error, { depth: 10 })} ${JSON.stringify(error)}`;
      for (const secret of ["AKFAKE", "token-Qx7", SECRET]) expect(shown).not.toContain(secret);
    }
    const notDate = s3Persistence(
      optionsFor(target, freshPrefix("bad-result"), {
        credentials: async () => ({ accessKeyId: "AKFAKE", secretAccessKey: SECRET, expiration: "soon" as never }),
      }),
    );
    expect(String(await rejection(notDate.load()))).toMatch(/TypeError: .*"expiration" that is not a valid Date/);
    expect(String(await rejection(notDate.load()))).not.toContain(SECRET);
  });

  it("a provider that throws fails the request (ERR_WRITE_FAILED) with its error's name and message, credentials cut out; the next request calls it again", async () => {
    let calls = 0;
    const leaky = async (): Promise<S3Credentials> => {
      calls++;
      if (calls === 1)
        // A provider that failed to parse an answer holding credentials may quote it.
        throw new SyntaxError(
          `Unexpected token in JSON: {"AccessKeyId":"ASIAEXAMPLEKEY123456","SecretAccessKey":"${SECRET}","SessionToken":"FwoGZXIvYXdzEBQaDEXAMPLE"}`,
        );
      return { accessKeyId: "AKFAKE", secretAccessKey: SECRET };
    };
    const a = s3Persistence(optionsFor(target, freshPrefix("throws"), { credentials: leaky }));
    const error = (await rejection(a.load())) as Error & { code?: string };
    expect(error.code).toBe("ERR_WRITE_FAILED");
    expect(error.message).toMatch(
      /credentials provider \(option "credentials"\) threw SyntaxError: Unexpected token in JSON/,
    );
    for (const secret of [SECRET, "ASIAEXAMPLEKEY123456", "FwoGZXIvYXdzEBQaDEXAMPLE"])
      expect(error.message).not.toContain(secret);
    expect((await a.load()).lastSeq).toBe(0);
    expect(calls).toBe(2);
  });

  it("a provider that never resolves fails the request after requestTimeoutMs (injected clock)", async () => {
    const fake = new FakeClock(0);
    const a = s3Persistence(
      optionsFor(target, freshPrefix("hangs"), {
        credentials: () => new Promise<S3Credentials>(() => undefined),
        clock: quickClockOn(fake),
        requestTimeoutMs: 5000,
      }),
    );
    let settled = false;
    const pending = rejection(a.load()).finally(() => {
      settled = true;
    });
    for (let i = 0; i < 100 && !settled; i++) {
      await new Promise((r) => setImmediate(r));
      await fake.advance(1000);
    }
    expect(fake.now()).toBeGreaterThanOrEqual(5000);
    expect(String(await pending)).toMatch(
      /credentials provider \(option "credentials"\) did not resolve within 5000 ms/,
    );
  });

  it("credentials that expire between a log write that landed and its claim check: the commit is confirmed once, after one refresh", async () => {
    const prefix = freshPrefix("mid-commit");
    const t = tokens();
    const a = s3Persistence(optionsFor(target, prefix, { credentials: t.provider }));
    await a.load();
    // The log PUT lands with the first token; the HEAD that follows finds it expired.
    const put = s3.arrival((r) => r.op === "PUT" && r.key.startsWith(`${prefix}log/`));
    const appended = a.append([kvRecord(1)]);
    await put;
    t.expire();
    await appended;
    expect(t.issued).toHaveLength(2);
    const b = s3Persistence(optionsFor(target, prefix));
    expect((await loadWithRecords(b)).records).toEqual([kvRecord(1)]);
  });

  it("option validation: a function is taken as a provider; fixed credentials may carry an expiration (a Date)", () => {
    const good = optionsFor(target, "x/");
    expect(() => s3Persistence({ ...good, credentials: async () => good.credentials as S3Credentials })).not.toThrow();
    expect(() =>
      s3Persistence({ ...good, credentials: { accessKeyId: "a", secretAccessKey: "b", expiration: new Date() } }),
    ).not.toThrow();
    expect(() =>
      s3Persistence({ ...good, credentials: { accessKeyId: "a", secretAccessKey: "b", expiration: 5 as never } }),
    ).toThrow(/"credentials\.expiration" must be a Date/);
  });
});
