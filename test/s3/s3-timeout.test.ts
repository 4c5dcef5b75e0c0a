/**
 * Request timeouts of the S3 adapter against the in-process fake: a store that accepts a request
 * and then hangs (no answer, or an answer whose body stops) is cut off after `requestTimeoutMs`
 * of the injected clock and retried like a lost answer; a slow upload or download that keeps moving
 * is not. Time is a FakeClock: a timeout fires only when the test advances it.
 */
import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadWithRecords } from "../../src/durability/persistence";
import { s3Persistence } from "../../src/s3/index";
import type { S3PersistenceOptions } from "../../src/s3/options";
import { answerWaitMs } from "../../src/s3/s3-client";
import { FakeClock } from "../../src/util/clock";
import { kvRecord } from "../durability/adapter-contract";
import { type FakeRequest, FakeS3, gate } from "./fake-s3";
import { freshPrefix, optionsFor, quickClockOn, type S3Target } from "./s3-harness";
import { rejection } from "./s3-suite";

const SECRET = "timeout-secret-Hq2Lm8Vw0Zr5Tx";
const TIMEOUT = 10_000;
const never = new Promise<never>(() => undefined);
let s3: FakeS3;
let target: S3Target;

beforeAll(async () => {
  s3 = await FakeS3.start({ accessKeyId: "AKFAKE" });
  target = { endpoint: s3.endpoint, bucket: "objects", accessKeyId: "AKFAKE", secretAccessKey: SECRET };
});
afterAll(async () => {
  await s3.close();
});

function setup(label: string, extra: Partial<S3PersistenceOptions> = {}) {
  const fake = new FakeClock();
  const prefix = freshPrefix(label);
  const options = (more: Partial<S3PersistenceOptions> = {}) =>
    optionsFor(target, prefix, { clock: quickClockOn(fake), requestTimeoutMs: TIMEOUT, ...extra, ...more });
  return { fake, prefix, options };
}

/** `p` and whether it has settled yet. */
function track<T>(p: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  const promise = p.finally(() => {
    settled = true;
  });
  promise.catch(() => undefined);
  return { promise, settled: () => settled };
}

/**
 * The attempt in flight has a countdown of `timeoutMs` (plus what its small body adds) from now:
 * `before` holds just before it ends, and then it fires. Time stops exactly where it fired, so the
 * retry's countdown starts from there whenever the retry gets going.
 */
async function expectTimeoutAt(fake: FakeClock, timeoutMs: number, before: () => void): Promise<void> {
  const due = fake.nextTimerAt() as number;
  expect(due - fake.now()).toBeGreaterThanOrEqual(timeoutMs);
  expect(due - fake.now()).toBeLessThan(timeoutMs + 50);
  await fake.advanceTo(due - 1);
  before();
  await fake.advanceTo(due);
}

const isPut = (prefix: string, dir: string) => (r: FakeRequest) =>
  r.op === "PUT" && r.key.startsWith(`${prefix}${dir}`);
const isGet = (prefix: string, dir: string) => (r: FakeRequest) =>
  r.op === "GET" && r.key.startsWith(`${prefix}${dir}`);

describe("s3 (fake): request timeouts", () => {
  it("a PUT whose answer never begins is aborted after requestTimeoutMs, retried, and lands once", async () => {
    const { fake, prefix, options } = setup("hang-put");
    const a = s3Persistence(options());
    await a.load();
    s3.fault({ match: isPut(prefix, "log/"), fault: { kind: "delay-answer", until: never } });
    const first = s3.arrival(isPut(prefix, "log/"));
    const appended = track(a.append([kvRecord(1)]));
    await first;
    await expectTimeoutAt(fake, TIMEOUT, () => {
      expect(appended.settled()).toBe(false);
      expect(s3.abandoned.filter(isPut(prefix, "log/"))).toEqual([]);
    });
    await appended.promise;
    // The client gave up on the first attempt (the server saw the connection close) and retried.
    expect(s3.abandoned.filter(isPut(prefix, "log/"))).toHaveLength(1);
    expect(s3.log.filter(isPut(prefix, "log/")).length).toBeGreaterThanOrEqual(3); // fence, hung, retry
    const b = s3Persistence(optionsFor(target, prefix));
    expect((await loadWithRecords(b)).records).toEqual([kvRecord(1)]);
  });

  it("a store that never answers: after the retries, ERR_WRITE_FAILED says it timed out and what to do, and holds no secret", async () => {
    const { fake, prefix, options } = setup("hang-always", { retries: 2 });
    const a = s3Persistence(options());
    await a.load();
    s3.fault({ match: isPut(prefix, "log/"), fault: { kind: "delay-answer", until: never }, times: 3 });
    let arrived = s3.arrival(isPut(prefix, "log/"));
    const appended = track(a.append([kvRecord(1)]));
    for (let attempt = 0; attempt < 3; attempt++) {
      await arrived;
      arrived = s3.arrival(isPut(prefix, "log/"));
      await expectTimeoutAt(fake, TIMEOUT, () => expect(appended.settled()).toBe(false));
    }
    const error = (await rejection(appended.promise)) as { code?: string; message: string; cause?: unknown };
    expect(error.code).toBe("ERR_WRITE_FAILED");
    expect(error.message).toContain(`S3 PUT of ${s3.endpoint}/objects/${prefix}log/`);
    expect(error.message).toContain(
      `the store made no progress within ${TIMEOUT} ms (requestTimeoutMs) in 3 of 3 attempts`,
    );
    expect(error.message).toContain("raise requestTimeoutMs");
    expect(s3.abandoned.filter(isPut(prefix, "log/"))).toHaveLength(3);
    const shown = `${inspect(error, { depth: 10 })} ${JSON.stringify(error)}`;
    for (const secret of [SECRET, "Signature=", "X-Amz-Credential", "AWS4-HMAC"]) expect(shown).not.toContain(secret);
  });

  it("an answer whose body stops midway is aborted once no byte came for requestTimeoutMs, and retried", async () => {
    const { fake, prefix, options } = setup("stall-body");
    const a = s3Persistence(options());
    await a.load();
    await a.append([kvRecord(1)]);
    const image = new Uint8Array(1000).map((_, i) => i % 251);
    await a.writeSnapshot({ seq: 1, timeMs: fake.now() }, image);
    const view = s3Persistence(options({ readOnly: true }));
    await view.load();
    s3.fault({ match: isGet(prefix, "snap/"), fault: { kind: "stall-body", bytes: 5 } });
    const arrived = s3.arrival(isGet(prefix, "snap/"));
    const read = track(view.readSnapshot(1));
    await arrived;
    await fake.advance(TIMEOUT - 1);
    expect(read.settled()).toBe(false);
    // Within twice the timeout: the body's countdown starts again when its first bytes arrive. Not
    // to 2 × TIMEOUT itself: a retry started at TIMEOUT has its own countdown due then, and its
    // answer comes over the network, which time on the fake clock does not wait for.
    await fake.advance(TIMEOUT);
    expect(Buffer.from(await read.promise).equals(image)).toBe(true);
    expect(s3.abandoned.filter(isGet(prefix, "snap/"))).toHaveLength(1);
    expect(s3.log.filter(isGet(prefix, "snap/"))).toHaveLength(2);
  });

  it("a slow upload that keeps moving is not cut off, though it takes longer than requestTimeoutMs", async () => {
    const { fake, prefix, options } = setup("slow-upload", { requestTimeoutMs: 5_000, retries: 0 });
    const a = s3Persistence(options());
    await a.load();
    await a.append([kvRecord(1)]);
    const image = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7919) % 251);
    let paused = gate();
    s3.fault({
      match: isPut(prefix, "snap/"),
      fault: {
        kind: "slow-request",
        chunkBytes: 256 * 1024,
        pause: () => {
          const resume = new Promise<void>((resolve) => fake.setTimer(resolve, 1_000));
          paused.open();
          return resume;
        },
      },
    });
    const start = fake.now();
    const written = track(a.writeSnapshot({ seq: 1, timeMs: start }, image));
    while (!written.settled()) {
      await Promise.race([paused.promise, written.promise]);
      paused = gate();
      if (!written.settled()) await fake.advance(1_000);
    }
    await written.promise;
    // 256 KiB a second: 12 s, more than the timeout, within what 3 MiB are allowed.
    expect(fake.now() - start).toBeGreaterThan(5_000);
    expect(fake.now() - start).toBeLessThan(answerWaitMs(5_000, image.length));
    expect(s3.abandoned.filter(isPut(prefix, "snap/"))).toEqual([]);
    const b = s3Persistence(optionsFor(target, prefix, { readOnly: true }));
    await b.load();
    expect(Buffer.from(await b.readSnapshot(1)).equals(image)).toBe(true);
  });

  it("an upload that stops moving is cut off once the time its size allows has passed", async () => {
    const { fake, prefix, options } = setup("stalled-upload", { requestTimeoutMs: 5_000, retries: 0 });
    // The server reads nothing while stalled, so it cannot see the abort: the signal shows it.
    const signals: AbortSignal[] = [];
    const recording: typeof fetch = (input, init) => {
      signals.push((input as Request).signal);
      return fetch(input, init);
    };
    const a = s3Persistence(options({ fetch: recording }));
    await a.load();
    await a.append([kvRecord(1)]);
    const image = new Uint8Array(3 * 1024 * 1024).fill(7);
    // The store takes the first MiB, then reads no more.
    s3.fault({
      match: isPut(prefix, "snap/"),
      fault: { kind: "slow-request", chunkBytes: 1024 * 1024, pause: () => never },
    });
    const written = track(a.writeSnapshot({ seq: 1, timeMs: fake.now() }, image));
    await s3.arrival(isPut(prefix, "snap/"));
    const allowed = answerWaitMs(5_000, image.length);
    expect(allowed).toBe(20_000);
    await fake.advance(allowed - 10);
    expect(written.settled()).toBe(false);
    await fake.advance(20);
    const error = (await rejection(written.promise)) as { code?: string; message: string };
    expect(error.code).toBe("ERR_WRITE_FAILED");
    expect(error.message).toContain("made no progress within 5000 ms (requestTimeoutMs) in 1 of 1 attempts");
    expect(signals.map((s) => s.aborted)).toEqual([...signals.slice(0, -1).map(() => false), true]);
    expect(s3.keys("objects", `${prefix}snap/`)).toEqual([]);
  });

  it("a slow download that keeps moving is not cut off: each chunk restarts the countdown", async () => {
    const { fake, prefix, options } = setup("slow-download");
    const a = s3Persistence(options());
    await a.load();
    const image = new Uint8Array(256 * 1024).map((_, i) => i % 253);
    await a.append([kvRecord(1)]);
    await a.writeSnapshot({ seq: 1, timeMs: fake.now() }, image);
    // Count what reaches the client through the `fetch` option, to advance time only after it.
    let received = 0;
    let arrived = gate();
    const counting: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (response.body === null) return response;
      const counted = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            received += chunk.length;
            arrived.open();
            controller.enqueue(chunk);
          },
        }),
      );
      return new Response(counted, response);
    };
    const view = s3Persistence(options({ readOnly: true, fetch: counting }));
    await view.load();
    // Each 64 KiB chunk 8 s of the fake clock after the one before.
    const pause = () => new Promise<void>((resolve) => fake.setTimer(resolve, 8_000));
    s3.fault({ match: isGet(prefix, "snap/"), fault: { kind: "slow-answer", chunkBytes: 64 * 1024, pause } });
    const start = fake.now();
    const read = track(view.readSnapshot(1));
    for (let chunk = 1; chunk < 4; chunk++) {
      while (received < chunk * 64 * 1024) {
        await arrived.promise;
        arrived = gate();
      }
      await fake.advance(8_000);
    }
    expect(Buffer.from(await read.promise).equals(image)).toBe(true);
    expect(fake.now() - start).toBeGreaterThan(TIMEOUT);
    expect(s3.abandoned.filter(isGet(prefix, "snap/"))).toEqual([]);
  });

  it("a fetch (the fetch option) that ignores the abort signal is not waited for; it sees the signal aborted", async () => {
    const { fake, options } = setup("deaf-fetch", { retries: 0 });
    const seen: Request[] = [];
    let hang = false;
    const deaf: typeof fetch = (input, init) => {
      if (!hang) return fetch(input, init);
      seen.push(input as Request);
      return never;
    };
    const a = s3Persistence(options({ fetch: deaf }));
    await a.load();
    hang = true;
    const appended = track(a.append([kvRecord(1)]));
    while (seen.length === 0) await fake.advance(0);
    await fake.advance(TIMEOUT - 1);
    expect(appended.settled()).toBe(false);
    expect(seen[0]?.signal.aborted).toBe(false);
    await fake.advance(TIMEOUT);
    const error = (await rejection(appended.promise)) as { code?: string; message: string };
    expect(error.code).toBe("ERR_WRITE_FAILED");
    expect(error.message).toContain(`made no progress within ${TIMEOUT} ms (requestTimeoutMs) in 1 of 1 attempts`);
    expect(seen[0]?.signal.aborted).toBe(true);
  });

  it("requestTimeoutMs is validated: a positive integer or Infinity", () => {
    const good = optionsFor(target, "x/");
    for (const bad of [0, -1, 1.5, Number.NaN, "30000", -Infinity])
      expect(() => s3Persistence({ ...good, requestTimeoutMs: bad as never })).toThrow(
        /option "requestTimeoutMs" must be an integer ≥ 1 \(milliseconds\) or Infinity/,
      );
    expect(() => s3Persistence({ ...good, requestTimeoutMs: Number.POSITIVE_INFINITY })).not.toThrow();
    expect(() => s3Persistence({ ...good, requestTimeoutMs: 1 })).not.toThrow();
  });
});
