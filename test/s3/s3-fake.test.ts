/**
 * The S3 adapter against an in-process fake with exact S3 semantics and injected faults.
 */
import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CommitRecord } from "../../src/durability/commit-record";
import { isFencedError, loadWithRecords } from "../../src/durability/persistence";
import { s3Persistence } from "../../src/s3/index";
import { kvRecord, range } from "../durability/adapter-contract";
import { FakeS3, gate } from "./fake-s3";
import { freshPrefix, optionsFor, type S3Target } from "./s3-harness";
import { describeS3Suite, rejection } from "./s3-suite";

const SECRET = "fake-secret-Zq9xVv3k8wWm1pLr";
let s3: FakeS3;
let target: S3Target;

beforeAll(async () => {
  s3 = await FakeS3.start({ accessKeyId: "AKFAKE" });
  target = { endpoint: s3.endpoint, bucket: "objects", accessKeyId: "AKFAKE", secretAccessKey: SECRET };
});
afterAll(async () => {
  await s3.close();
});

describeS3Suite("s3 (fake)", () => target);

const isLogPut = (prefix: string) => (r: { op: string; key: string }) =>
  r.op === "PUT" && r.key.startsWith(`${prefix}log/`);

describe("s3 (fake): faults", () => {
  it("a log write that lands but whose answer is lost is confirmed once, not written twice", async () => {
    const prefix = freshPrefix("lost");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    s3.fault({ match: isLogPut(prefix), fault: { kind: "lose-answer" } });
    await a.append([kvRecord(1)]);
    await a.append([kvRecord(2)]);
    const b = s3Persistence(optionsFor(target, prefix));
    expect((await loadWithRecords(b)).records).toEqual([kvRecord(1), kvRecord(2)]);
  });

  it("503 and 409 answers are retried", async () => {
    const prefix = freshPrefix("retry");
    const a = s3Persistence(optionsFor(target, prefix));
    s3.fault({
      match: (r) => r.key.startsWith(prefix),
      fault: { kind: "status", status: 503, code: "SlowDown" },
      times: 3,
    });
    await a.load();
    s3.fault({ match: isLogPut(prefix), fault: { kind: "status", status: 409, code: "ConditionalRequestConflict" } });
    s3.fault({ match: isLogPut(prefix), fault: { kind: "status", status: 503, code: "SlowDown" } });
    await a.append([kvRecord(1)]);
    const b = s3Persistence(optionsFor(target, prefix));
    expect((await loadWithRecords(b)).records).toEqual([kvRecord(1)]);
  });

  it("a store that keeps failing makes the append fail with ERR_WRITE_FAILED (not fenced), and a reload recovers", async () => {
    const prefix = freshPrefix("down");
    const a = s3Persistence(optionsFor(target, prefix, { retries: 1 }));
    await a.load();
    s3.fault({ match: isLogPut(prefix), fault: { kind: "status", status: 503, code: "SlowDown" }, times: 2 });
    const error = await rejection(a.append([kvRecord(1)]));
    expect((error as { code?: string }).code).toBe("ERR_WRITE_FAILED");
    expect(isFencedError(error)).toBe(false);
    expect(String((error as Error).message)).toMatch(/HTTP 503 SlowDown/);
    expect((await a.load()).lastSeq).toBe(0);
    await a.append([kvRecord(1)]);
  });

  it("a slow store: a write that lands after a newer claim is never confirmed", async () => {
    const prefix = freshPrefix("slow-answer");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    await a.append([kvRecord(1)]);
    const held = gate();
    // a's next log write lands at once, but its answer waits until b has claimed the object.
    s3.fault({ match: isLogPut(prefix), fault: { kind: "delay-answer", until: held.promise } });
    let settled = false;
    const pending = a.append([kvRecord(2)]).finally(() => {
      settled = true;
    });
    while (!s3.log.some((r) => isLogPut(prefix)(r) && r.key.endsWith("3"))) await new Promise((r) => setImmediate(r));
    const b = s3Persistence(optionsFor(target, prefix));
    const loaded = await loadWithRecords(b);
    expect(settled).toBe(false);
    held.open();
    expect(isFencedError(await rejection(pending))).toBe(true);
    // The write landed before b's fence, so b has it; but a never confirmed it.
    expect(loaded.records.map((r) => r.seq)).toEqual([1, 2]);
  });

  it("a slow store: a write that arrives after the new holder's fence fails with ERR_FENCED and is not in the log", async () => {
    const prefix = freshPrefix("slow-request");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    await a.append([kvRecord(1)]);
    const held = gate();
    s3.fault({ match: isLogPut(prefix), fault: { kind: "delay-request", until: held.promise } });
    const pending = a.append([kvRecord(2)]);
    const b = s3Persistence(optionsFor(target, prefix));
    const loaded = await loadWithRecords(b);
    held.open();
    expect(isFencedError(await rejection(pending))).toBe(true);
    expect(loaded.records.map((r) => r.seq)).toEqual([1]);
    await b.append([kvRecord(2, { kv: [] })]);
    const c = s3Persistence(optionsFor(target, prefix));
    expect((await loadWithRecords(c)).records).toEqual([kvRecord(1), kvRecord(2, { kv: [] })]);
  });

  it("a stale LIST changes nothing: the log and the newest claim are found by reads, not listings", async () => {
    const prefix = freshPrefix("stale");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    await a.append(range(1, 5).map((s) => kvRecord(s)));
    s3.staleListMutations = 1_000_000;
    try {
      const b = s3Persistence(optionsFor(target, prefix));
      expect((await loadWithRecords(b)).records.map((r) => r.seq)).toEqual(range(1, 5));
      expect(b.epoch).toBe((a.epoch as number) + 1);
      expect(isFencedError(await rejection(a.append([kvRecord(6)])))).toBe(true);
    } finally {
      s3.staleListMutations = 0;
    }
  });

  it("group commit: appends arriving while a write is in flight go out as one log object, each confirmed only when durable", async () => {
    const prefix = freshPrefix("group");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    const first = gate();
    const second = gate();
    s3.fault({ match: isLogPut(prefix), fault: { kind: "delay-answer", until: first.promise } });
    s3.fault({ match: isLogPut(prefix), fault: { kind: "delay-answer", until: second.promise } });
    const done = new Set<number>();
    const appends = range(1, 20).map((s) => a.append([kvRecord(s)]).then(() => done.add(s)));
    while (s3.log.filter(isLogPut(prefix)).length < 2) await new Promise((r) => setImmediate(r));
    expect(done.size).toBe(0);
    first.open();
    while (s3.log.filter(isLogPut(prefix)).length < 3) await new Promise((r) => setImmediate(r));
    // The first object carried seq 1 only; 2..20 wait together for the second.
    await new Promise((r) => setImmediate(r));
    expect([...done]).toEqual([1]);
    second.open();
    await Promise.all(appends);
    const logs = s3.keys("objects", `${prefix}log/`);
    // fence + two group commits
    expect(logs.length).toBe(3);
    const b = s3Persistence(optionsFor(target, prefix));
    expect((await loadWithRecords(b)).records.map((r) => r.seq)).toEqual(range(1, 20));
  });

  it("refuses an endpoint that ignores conditional writes, naming If-None-Match", async () => {
    const unsafe = await FakeS3.start({ accessKeyId: "AKFAKE", ignoreConditionalWrites: true });
    try {
      const a = s3Persistence(optionsFor({ ...target, endpoint: unsafe.endpoint }, freshPrefix("unsafe")));
      const error = await rejection(a.load());
      expect((error as { code?: string }).code).toBe("ERR_BACKEND_UNSUPPORTED");
      expect((error as Error).message).toMatch(/If-None-Match/);
      expect(unsafe.keys("objects").filter((k) => k.includes("/claim/"))).toEqual([]);
    } finally {
      await unsafe.close();
    }
  });

  it("the newest log objects deleted from the bucket under a newer snapshot: ERR_CORRUPT, not the snapshot's state with the later commits gone", async () => {
    const prefix = freshPrefix("lostend");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    for (const seq of range(1, 8)) {
      await a.append([kvRecord(seq)]);
      if (seq === 6) await a.writeSnapshot({ seq: 6, timeMs: 6 }, new Uint8Array(20).fill(6));
    }
    await a.close();
    const logs = s3.keys("objects", `${prefix}log/`);
    // The objects of seqs 6, 7 and 8 (the first position is the first open's fence).
    const bucket = s3.buckets.get("objects") as Map<string, unknown>;
    const removed = logs.slice(-3).map((key) => [key, bucket.get(key)] as const);
    for (const [key] of removed) bucket.delete(key);
    for (const readOnly of [false, true]) {
      const b = s3Persistence(optionsFor(target, prefix, { readOnly }));
      await expect(b.load(), `readOnly: ${readOnly}`).rejects.toMatchObject({
        code: "ERR_CORRUPT",
        message: expect.stringContaining("the snapshot of seq 6 is newer than the log's end (seq 5)"),
      });
      await b.close();
    }
    // The refused open took no log position: the objects put back, the object opens whole.
    expect(s3.keys("objects", `${prefix}log/`)).toEqual(logs.slice(0, -3));
    for (const [key, object] of removed) bucket.set(key, object);
    const c = s3Persistence(optionsFor(target, prefix));
    const whole = await loadWithRecords(c);
    expect(whole.lastSeq).toBe(8);
    expect(whole.records.map((r) => r.seq)).toEqual([7, 8]);
    await c.close();
  });

  it("a log object deleted from the middle of the log: ERR_CORRUPT before the open's fence, not the state before it", async () => {
    const prefix = freshPrefix("hole");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    for (const seq of range(1, 8)) await a.append([kvRecord(seq)]);
    await a.close();
    const logs = s3.keys("objects", `${prefix}log/`);
    const bucket = s3.buckets.get("objects") as Map<string, unknown>;
    const hole = logs[4] as string; // seq 4 (the first position is the first open's fence)
    const removed = bucket.get(hole);
    bucket.delete(hole);
    const b = s3Persistence(optionsFor(target, prefix));
    await expect(b.load()).rejects.toMatchObject({
      code: "ERR_CORRUPT",
      message: expect.stringContaining(`log object ${hole} is missing, but ${logs[5] as string} follows it`),
    });
    await b.close();
    // No fence took the hole: the object put back, the object opens whole.
    expect(s3.keys("objects", `${prefix}log/`)).toEqual(logs.filter((k) => k !== hole));
    bucket.set(hole, removed);
    const c = s3Persistence(optionsFor(target, prefix));
    expect((await loadWithRecords(c)).records.map((r) => r.seq)).toEqual(range(1, 8));
    await c.close();
  });

  it("compaction folds log objects into segments: reopening reads few objects and every record", async () => {
    const prefix = freshPrefix("compact");
    const a = s3Persistence(optionsFor(target, prefix, { compactAfterObjects: 4 }));
    await a.load();
    for (const s of range(1, 40)) await a.append([kvRecord(s)]);
    await a.compact();
    expect(s3.keys("objects", `${prefix}log/`).length).toBeLessThanOrEqual(2);
    expect(a.stats().compactions).toBeGreaterThan(1);
    const b = s3Persistence(optionsFor(target, prefix));
    const loaded = await loadWithRecords(b);
    expect(loaded.records.map((r) => r.seq)).toEqual(range(1, 40));
    expect((await b.readRecords(10, 30)).map((r) => r.seq)).toEqual(range(11, 30));
  });
  it("an open downloads each unfolded log object once: load() keeps what it read for the stream that follows", async () => {
    const prefix = freshPrefix("once");
    const a = s3Persistence(optionsFor(target, prefix, { compactAfterObjects: 1000 }));
    await a.load();
    for (const s of range(1, 30)) await a.append([kvRecord(s)]);
    const b = s3Persistence(optionsFor(target, prefix));
    const loaded = await b.load();
    const gets = b.stats().requests.GET;
    const seen: number[] = [];
    for await (const chunk of b.streamRecords(0, loaded.lastSeq)) seen.push(...chunk.map((r) => r.seq));
    expect(seen).toEqual(range(1, 30));
    // Every log object came from what load() read: the stream made no GET of its own.
    expect(b.stats().requests.GET).toBe(gets);
    // Handed out once: a second read (a restore's, later) goes to the store again.
    expect((await b.readRecords(0, 30)).map((r) => r.seq)).toEqual(range(1, 30));
    expect(b.stats().requests.GET).toBeGreaterThan(gets);
  });

  it("what load() kept and the open's stream did not take (objects before its snapshot) is released, as at close()", async () => {
    const prefix = freshPrefix("release");
    const a = s3Persistence(optionsFor(target, prefix, { compactAfterObjects: 1000 }));
    await a.load();
    for (const s of range(1, 30)) await a.append([kvRecord(s)]);
    await a.writeSnapshot({ seq: 20, timeMs: 0 }, new Uint8Array([1]));
    // The open streams from its snapshot: the objects of seqs 1-20 are not taken.
    const b = s3Persistence(optionsFor(target, prefix));
    const loaded = await b.load();
    const seen: number[] = [];
    for await (const chunk of b.streamRecords(20, loaded.lastSeq)) seen.push(...chunk.map((r) => r.seq));
    expect(seen).toEqual(range(21, 30));
    // Released with that stream: reading them (a restore, later) downloads them, one GET per object.
    let gets = b.stats().requests.GET;
    expect((await b.readRecords(0, 20)).map((r) => r.seq)).toEqual(range(1, 20));
    expect(b.stats().requests.GET - gets).toBe(20);
    // Nothing streamed after load(): close() releases everything it kept.
    const c = s3Persistence(optionsFor(target, prefix, { readOnly: true }));
    await c.load();
    await c.close();
    gets = c.stats().requests.GET;
    expect((await c.readRecords(0, 30)).map((r) => r.seq)).toEqual(range(1, 30));
    expect(c.stats().requests.GET - gets).toBe(30);
  });
});

describe("s3 (fake): options and secrets", () => {
  it("an unknown or malformed option is a TypeError naming it", () => {
    const good = optionsFor(target, "x/");
    expect(() => s3Persistence({ ...good, bukket: "x" } as never)).toThrow(/unknown option "bukket"/);
    expect(() => s3Persistence({ ...good, credentials: { ...good.credentials, secret: "s" } } as never)).toThrow(
      /unknown option "credentials.secret"/,
    );
    expect(() => s3Persistence({ ...good, endpoint: "ftp://x" })).toThrow(TypeError);
    expect(() => s3Persistence({ ...good, endpoint: "http://user:pw@host" })).toThrow(/must not contain credentials/);
    expect(() => s3Persistence({ ...good, prefix: "../x" })).not.toThrow();
    expect(() => s3Persistence({ ...good, prefix: "a b" })).toThrow(/"prefix"/);
    expect(() => s3Persistence({ ...good, bucket: "A" })).toThrow(/"bucket"/);
    expect(() => s3Persistence({ ...good, retries: -1 })).toThrow(/"retries"/);
    expect(() => s3Persistence({ ...good, credentials: { accessKeyId: "a", secretAccessKey: "" } })).toThrow(
      /secretAccessKey/,
    );
  });

  it("a key id or session token that cannot go into a request header (a newline read from a file) is a TypeError naming the option, never the value", async () => {
    // Before, the adapter took them, and fetch refused the signed headers with a message that quoted
    // them: the key id, the session token, and the signature of an UNSIGNED-PAYLOAD request.
    for (const credentials of [
      { accessKeyId: "AKFAKE\n", secretAccessKey: SECRET },
      { accessKeyId: "AKFAKE\r\n", secretAccessKey: SECRET },
      { accessKeyId: "AK FAKE", secretAccessKey: SECRET },
      { accessKeyId: "AKFAKE\u20ac", secretAccessKey: SECRET },
      { accessKeyId: "AKFAKE", secretAccessKey: SECRET, sessionToken: "token-Qx7\nrest" },
      { accessKeyId: "AKFAKE", secretAccessKey: SECRET, sessionToken: "token-Qx7 rest" },
    ]) {
      const error = await rejection(
        Promise.resolve().then(() =>
          s3Persistence({ ...optionsFor(target, freshPrefix("header")), credentials, retries: 0 }).load(),
        ),
      );
      const shown = `${inspect(error, { depth: 10 })} ${JSON.stringify(error)}`;
      expect(error, JSON.stringify(credentials)).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(
        credentials.sessionToken === undefined ? /"credentials\.accessKeyId"/ : /"credentials\.sessionToken"/,
      );
      for (const secret of ["AKFAKE", "AK FAKE", "token-Qx7", "Signature", SECRET]) expect(shown).not.toContain(secret);
    }
    // A secret is only hashed, never sent: any string signs (the store says whether it is the right one).
    expect(() =>
      s3Persistence(optionsFor({ ...target, secretAccessKey: `${SECRET}\n\u20ac` }, freshPrefix("header"))),
    ).not.toThrow();
  });

  it("secrets never appear in errors, their causes, or the adapter's inspection", async () => {
    const wrong = s3Persistence(
      optionsFor({ ...target, accessKeyId: "AKWRONG", secretAccessKey: SECRET }, freshPrefix("secret")),
    );
    const denied = await rejection(wrong.load());
    const closed = s3Persistence(
      optionsFor({ ...target, endpoint: "http://127.0.0.1:1" }, freshPrefix("secret"), { retries: 0 }),
    );
    const unreachable = await rejection(closed.load());
    for (const e of [denied, unreachable]) {
      expect(e).toBeInstanceOf(Error);
      expect(inspect(e, { depth: 10 })).not.toContain(SECRET);
      expect(JSON.stringify(e)).not.toContain(SECRET);
    }
    expect(String((denied as Error).message)).toMatch(/HTTP 403 AccessDenied/);
    expect(String((unreachable as Error).message)).toMatch(/no answer/);
    expect(inspect(wrong, { depth: 10, showHidden: true })).not.toContain(SECRET);
    expect(JSON.stringify(wrong)).not.toContain(SECRET);
    expect(
      String(
        (await rejection(
          Promise.resolve().then(() => s3Persistence({ ...optionsFor(target, "x/"), nope: SECRET } as never)),
        )) as Error,
      ),
    ).not.toContain(SECRET);
  });
});

describe("s3 (fake): a fetch option that throws", () => {
  it("its message is quoted without the request's credentials, signature or session token, however it quotes them", async () => {
    const TOKEN = "session-token-Mk4Rt7Yp2Wq9Zx5Lc3Vb8Nd1";
    const seen: string[] = [];
    const quoting = (describe: (headers: [string, string][]) => string): typeof fetch =>
      (async (input: RequestInfo | URL) => {
        const headers = [...(input as Request).headers.entries()];
        seen.push(...headers.map(([, v]) => v));
        // A wrapper that describes the request in its error (no cause.code, as the adapter quotes
        // the message of such an error).
        throw new Error(`proxy refused the request ${describe(headers)}`);
      }) as typeof fetch;
    const describers = [
      (h: [string, string][]) => JSON.stringify(h),
      (h: [string, string][]) => h.map(([n, v]) => `${n}=${encodeURIComponent(v)}`).join("&"),
      (h: [string, string][]) => Buffer.from(JSON.stringify(h)).toString("base64"),
      (h: [string, string][]) => h.map(([n, v]) => `${n}: ${v.toUpperCase()}`).join("; "),
    ];
    for (const describe of describers) {
      seen.length = 0;
      const a = s3Persistence(
        optionsFor(target, freshPrefix("quoting-fetch"), {
          retries: 0,
          fetch: quoting(describe),
          credentials: { accessKeyId: "AKFAKE", secretAccessKey: SECRET, sessionToken: TOKEN },
        }),
      );
      const error = (await rejection(a.load())) as Error;
      const shown = `${error.message} ${inspect(error, { depth: 10, showHidden: true })} ${JSON.stringify(error)}`;
      // Still says what happened, and which request.
      expect(error.message).toMatch(/no answer \(.*proxy refused the request/);
      expect(error.message).toContain("S3 PUT of");
      const signature = seen.map((v) => /Signature=([0-9a-f]+)/.exec(v)?.[1]).find((x) => x !== undefined) as string;
      expect(signature).toMatch(/^[0-9a-f]{64}$/);
      for (const secret of [SECRET, TOKEN, signature, signature.toUpperCase(), "AKFAKE", encodeURIComponent(TOKEN)])
        expect(shown, describe.toString()).not.toContain(secret);
    }
  });
});

describe("s3 (fake): an object taken over by another holder", () => {
  it("the old object context fails with ERR_FENCED and never claims the object back", async () => {
    const { ObjectContext } = await import("../../src/index");
    const prefix = freshPrefix("context");
    class Counter {
      constructor(
        readonly state: { storage: { get(k: string): Promise<unknown>; put(k: string, v: unknown): Promise<void> } },
      ) {}
      async bump(): Promise<number> {
        const n = ((await this.state.storage.get("n")) as number | undefined) ?? 0;
        await this.state.storage.put("n", n + 1);
        return n + 1;
      }
    }
    const first = await ObjectContext.create(Counter as never, {
      storage: { persistence: s3Persistence(optionsFor(target, prefix)) },
      alarms: false,
    });
    expect(await first.call("bump")).toBe(1);
    const second = await ObjectContext.create(Counter as never, {
      storage: { persistence: s3Persistence(optionsFor(target, prefix)) },
      alarms: false,
    });
    const claims = s3.keys("objects", `${prefix}claim/`);
    expect(isFencedError(await rejection(first.call("bump")))).toBe(true);
    expect(isFencedError(await rejection(first.call("bump")))).toBe(true);
    expect(s3.keys("objects", `${prefix}claim/`)).toEqual(claims);
    expect(await second.call("bump")).toBe(2);
    expect(await second.call("bump")).toBe(3);
    await second.close();
    await first.close().catch(() => undefined);
  });
});

describe("s3 (fake): a bucket that does not exist", () => {
  it("a read-only view of it fails naming NoSuchBucket instead of showing an empty object", async () => {
    const view = s3Persistence(
      optionsFor({ ...target, bucket: "no-such-bucket" }, freshPrefix("nb"), { readOnly: true }),
    );
    const error = (await rejection(loadWithRecords(view))) as { code?: string; message: string };
    expect(error.code).toBe("ERR_WRITE_FAILED");
    expect(error.message).toContain("HTTP 404 NoSuchBucket");
    expect(error.message).not.toContain(SECRET);
  });
});

describe("s3 (fake): metadata versions", () => {
  it("metadata written without x-amz-meta-version keeps its index as its version; an open's fence keeps bytes and version", async () => {
    const prefix = freshPrefix("legacy-meta");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    expect(await a.writeMetaIf(0, new Uint8Array([1]))).toBe(true);
    expect(await a.writeMetaIf(1, new Uint8Array([2]))).toBe(true);
    // As an older release stored them: the version is the index, no header says it.
    for (const key of s3.keys("objects", `${prefix}meta/`)) delete s3.object("objects", key)?.meta.version;
    const b = s3Persistence(optionsFor(target, prefix));
    await b.load();
    const seen = await b.readMetaVersion();
    expect(seen.bytes).toEqual(new Uint8Array([2]));
    expect(seen.version).toBe(3);
    expect(await b.writeMetaIf(2, new Uint8Array([3]))).toBe(false);
    expect(await b.writeMetaIf(3, new Uint8Array([4]))).toBe(true);
    const c = s3Persistence(optionsFor(target, prefix, { readOnly: true }));
    await c.load();
    expect(await c.readMetaVersion()).toEqual({ bytes: new Uint8Array([4]), version: 4 });
  });
});

describe("s3 (fake): reading the log while it is compacted", () => {
  const seqs = async (stream: AsyncIterable<readonly CommitRecord[]>, during: () => Promise<void>) => {
    const seen: number[] = [];
    let done = false;
    for await (const chunk of stream) {
      seen.push(...chunk.map((r) => r.seq));
      if (!done) {
        done = true;
        await during();
      }
    }
    return seen;
  };

  it("a read of the log overlapping this holder's compaction reads the folded records from the new segment", async () => {
    const prefix = freshPrefix("stream-compact");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    for (const s of range(1, 20)) await a.append([kvRecord(s)]);
    expect(await seqs(a.streamRecords(0, 20), () => a.compact())).toEqual(range(1, 20));
  });

  it("a read-only view's read follows the live holder's compaction (the newest manifest), not reported as pruned", async () => {
    const prefix = freshPrefix("view-compact");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    for (const s of range(1, 20)) await a.append([kvRecord(s)]);
    const view = s3Persistence(optionsFor(target, prefix, { readOnly: true }));
    await view.load();
    // The first read takes the bodies load() kept; the second downloads them.
    expect((await view.readRecords(0, 20)).length).toBe(20);
    expect(await seqs(view.streamRecords(0, 20), () => a.compact())).toEqual(range(1, 20));
  });

  it("a read-only view opened while the live holder compacts shows the newest state, not an earlier one", async () => {
    const prefix = freshPrefix("open-during-compact");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    for (const s of range(1, 20)) await a.append([kvRecord(s)]);
    // The view has read the (empty) manifest; its GET of the first log position waits while the
    // holder folds positions 1..20 into a segment and deletes them.
    const firstLog = `${prefix}log/${"1".padStart(16, "0")}`;
    const held = gate();
    s3.fault({
      match: (r) => r.op === "GET" && r.key === firstLog,
      fault: { kind: "delay-request", until: held.promise },
    });
    const arrived = s3.arrival((r) => r.op === "GET" && r.key === firstLog);
    const view = s3Persistence(optionsFor(target, prefix, { readOnly: true }));
    const loading = loadWithRecords(view);
    await arrived;
    await a.compact();
    expect(s3.object("objects", firstLog)).toBeUndefined();
    held.open();
    const { lastSeq, records } = await loading;
    expect(lastSeq).toBe(20);
    expect(records.map((r) => r.seq)).toEqual(range(1, 20));
  });

  it("a segment the newest manifest names but the bucket lacks is damage (ERR_CORRUPT), not pruned history", async () => {
    const prefix = freshPrefix("missing-segment");
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    for (const s of range(1, 5)) await a.append([kvRecord(s)]);
    await a.compact();
    const [segment] = s3.keys("objects", `${prefix}seg/`);
    s3.buckets.get("objects")?.delete(segment as string);
    const b = s3Persistence(optionsFor(target, prefix));
    const error = (await rejection(loadWithRecords(b))) as { code?: string; message: string };
    expect(error.code).toBe("ERR_CORRUPT");
    expect(error.message).toContain(`${segment}, which the manifest names, is missing`);
  });
});

/**
 * The renamed- and copied-snapshot weaknesses of a directory (docs/durability.md, *Files from
 * another object*) checked on the S3 layout: the manifest names each snapshot by seq, time, CRC and
 * epoch, and the key is built from those, so an object copied to another key is never read, and
 * bytes copied over a key the manifest names fail the CRC the manifest holds.
 */
describe("s3 (fake): snapshot objects copied by an operator", () => {
  const objects = () =>
    s3.buckets.get("objects") as Map<string, { body: Buffer; meta: Record<string, string>; etag: string }>;
  const snapshotKeys = (prefix: string) => [...objects().keys()].filter((k) => k.startsWith(`${prefix}snap/`)).sort();
  async function withSnapshot(prefix: string, fill: number): Promise<string> {
    const a = s3Persistence(optionsFor(target, prefix));
    await a.load();
    await a.append(range(1, 5).map((s) => kvRecord(s)));
    await a.writeSnapshot({ seq: 3, timeMs: 3000 }, new Uint8Array(1000).fill(fill));
    await a.close();
    const [key] = snapshotKeys(prefix);
    return key as string;
  }

  it("a snapshot copied to another seq's key (renamed) is not read: the manifest does not name it", async () => {
    const prefix = freshPrefix("snap-renamed");
    const key = await withSnapshot(prefix, 1);
    const renamed = key.replace("/snap/0000000000000003-", "/snap/0000000000000005-");
    objects().set(renamed, { ...(objects().get(key) as { body: Buffer; meta: Record<string, string>; etag: string }) });
    const b = s3Persistence(optionsFor(target, prefix, { readOnly: true }));
    const loaded = await b.load();
    expect(loaded.snapshots.map((s) => s.seq)).toEqual([3]);
    await expect(b.readSnapshot(5)).rejects.toThrow(/no snapshot for seq 5/i);
  });

  it("another prefix's snapshot copied over the key this prefix's manifest names fails its checksum", async () => {
    const own = freshPrefix("snap-own");
    const other = freshPrefix("snap-other");
    const ownKey = await withSnapshot(own, 1);
    const otherKey = await withSnapshot(other, 2);
    objects().set(ownKey, {
      ...(objects().get(otherKey) as { body: Buffer; meta: Record<string, string>; etag: string }),
    });
    const b = s3Persistence(optionsFor(target, own, { readOnly: true }));
    await b.load();
    await expect(b.readSnapshot(3)).rejects.toMatchObject({ code: "ERR_CORRUPT" });
    // Under its own key (the name differs in its CRC) it is not named by this prefix's manifest.
    objects().set(`${own}${otherKey.slice(other.length)}`, {
      ...(objects().get(otherKey) as { body: Buffer; meta: Record<string, string>; etag: string }),
    });
    expect((await b.load()).snapshots).toHaveLength(1);
  });
});
