/**
 * Differential tests of the alarm API (issue 6): transcripts of setAlarm/getAlarm/deleteAlarm
 * results and error texts run in real workerd (Miniflare, SQLite-backed) and in ObjectStorage, and
 * one alarm that really fires (real clock on both sides), fails once and is retried.
 *
 * One Miniflare instance holds every worker this file needs: the transcript object under both
 * deleteAll compat dates, and the firing probes (with and without an alarm handler).
 */
import { randomUUID } from "node:crypto";
import type { Miniflare, WorkerOptions } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import type { Op, OpResult } from "./ops";
import { maskPendingMismatches } from "./pending-mismatches";
import { classFromSource, type ObjectSide, objectWorker, ourSide, startMiniflare, workerdSide } from "./same-source";
import { runOnSubject } from "./subject";
import { createTranscriptCodec, type Encoded } from "./transcript-codec";
import { DEFAULT_COMPATIBILITY_DATE, DELETE_ALL_DELETES_ALARM_DATE, workerScript } from "./workerd";

const codec = createTranscriptCodec();
const enc = (value: unknown): Encoded => codec.encode(value);
const ok = (value: unknown): OpResult => ({ ok: true, value: enc(value) });

const FAR_FUTURE_MS = Date.UTC(2100, 0, 1);
/** The stand-in for "a time within a second of now" once both transcripts were checked for it. */
const ABOUT_NOW = "≈ now";
const NOW_TOLERANCE_MS = 1_000;

/** Transcript workers, one per deleteAll compat date (the same script as `workerd.ts`). */
const TRANSCRIPTS = {
  [DEFAULT_COMPATIBILITY_DATE]: "transcripts-keep-alarm",
  [DELETE_ALL_DELETES_ALARM_DATE]: "transcripts-delete-alarm",
} as const;
type TranscriptDate = keyof typeof TRANSCRIPTS;

function transcriptWorker(compatibilityDate: TranscriptDate): WorkerOptions {
  return {
    name: TRANSCRIPTS[compatibilityDate],
    modules: true,
    script: workerScript(),
    compatibilityDate,
    durableObjects: { OBJECT: { className: "TranscriptObject", useSQLite: true } },
  };
}

/**
 * The firing probe. Each attempt of `alarm()` appends what it saw to storage and the first one
 * throws, so the platform retries it (after ~2 s plus jitter).
 */
const ALARM_PROBE_SOURCE = `
class AlarmProbe {
  constructor(ctx, env) {
    this.ctx = ctx;
  }

  async fetch(request) {
    const storage = this.ctx.storage;
    switch (new URL(request.url).pathname) {
      case "/arm": {
        const time = Date.now() + 50;
        await storage.setAlarm(time);
        return Response.json(time);
      }
      case "/state":
        return Response.json({ attempts: (await storage.get("attempts")) ?? [], alarm: await storage.getAlarm() });
      default:
        return new Response("no such path", { status: 404 });
    }
  }

  async alarm(info) {
    const storage = this.ctx.storage;
    const attempts = (await storage.get("attempts")) ?? [];
    attempts.push({
      retryCount: info.retryCount,
      isRetry: info.isRetry,
      scheduledTime: info.scheduledTime,
      alarmInHandler: await storage.getAlarm(),
    });
    await storage.put("attempts", attempts);
    if (attempts.length === 1) throw new Error("First attempt fails on purpose.");
  }
}
`;

/** A class without alarm(): setAlarm is refused outside the constructor. */
const NO_HANDLER_SOURCE = `
class NoHandler {
  constructor(ctx, env) {
    this.ctx = ctx;
  }

  async fetch() {
    try {
      await this.ctx.storage.setAlarm(Date.now() + 60000);
      return Response.json({ set: await this.ctx.storage.getAlarm() !== null });
    } catch (error) {
      return Response.json({ name: error.name, message: error.message });
    }
  }
}
`;

let mf: Miniflare;

beforeAll(async () => {
  mf = await startMiniflare([
    transcriptWorker(DEFAULT_COMPATIBILITY_DATE),
    transcriptWorker(DELETE_ALL_DELETES_ALARM_DATE),
    objectWorker("alarm-probe", ALARM_PROBE_SOURCE, "AlarmProbe", DEFAULT_COMPATIBILITY_DATE),
    objectWorker("no-handler", NO_HANDLER_SOURCE, "NoHandler", DEFAULT_COMPATIBILITY_DATE),
  ]);
});

afterAll(async () => {
  await mf?.dispose();
});

/** Runs a transcript on a fresh workerd object of the worker for `compatibilityDate`. */
async function runOnWorkerd(ops: readonly Op[], compatibilityDate: TranscriptDate = DEFAULT_COMPATIBILITY_DATE) {
  const worker = await mf.getWorker(TRANSCRIPTS[compatibilityDate]);
  const response = await worker.fetch(`http://transcript/run?name=${randomUUID()}`, {
    method: "POST",
    body: JSON.stringify(ops),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`workerd run failed (${response.status}): ${text}`);
  return JSON.parse(text) as OpResult[];
}

/**
 * Replaces every successful numeric result within {@link NOW_TOLERANCE_MS} of `[fromMs, toMs]` by
 * {@link ABOUT_NOW} (inside transactions too), so clamped-to-now alarm times compare across sides.
 */
function withAboutNow(results: readonly OpResult[], fromMs: number, toMs: number): OpResult[] {
  return results.map((result) => {
    const inner = result.inner === undefined ? {} : { inner: withAboutNow(result.inner, fromMs, toMs) };
    if (result.ok && typeof result.value === "number") {
      const near = result.value >= fromMs - NOW_TOLERANCE_MS && result.value <= toMs + NOW_TOLERANCE_MS;
      if (near) return { ...result, value: ABOUT_NOW, ...inner };
    }
    return { ...result, ...inner };
  });
}

/** Runs `ops` on both sides (ours with the deleteAll option matching the compat date). */
async function bothTranscripts(ops: readonly Op[], compatibilityDate: TranscriptDate = DEFAULT_COMPATIBILITY_DATE) {
  const fromMs = Date.now();
  const workerd = await runOnWorkerd(ops, compatibilityDate);
  const deleteAllDeletesAlarm = compatibilityDate === DELETE_ALL_DELETES_ALARM_DATE;
  const ours = await runOnSubject(ops, { deleteAllDeletesAlarm });
  const toMs = Date.now();
  return { workerd: withAboutNow(workerd, fromMs, toMs), ours: withAboutNow(ours, fromMs, toMs) };
}

/** Expects identical transcripts and returns workerd's (for the platform-fact assertions). */
async function expectSameAsWorkerd(ops: readonly Op[], compatibilityDate?: TranscriptDate): Promise<OpResult[]> {
  const { workerd, ours } = await bothTranscripts(ops, compatibilityDate);
  expect(ours).toEqual(workerd);
  return workerd;
}

const typeError = (message: string): OpResult => ({ ok: false, error: { name: "TypeError", message } });
const NOT_A_DATE = "The value cannot be converted because it is not a valid Date.";
const NOT_OF_TYPE_DATE = "Failed to execute 'setAlarm' on 'DurableObjectStorage': parameter 1 is not of type 'date'.";
const AT_OR_BEFORE_ZERO = "setAlarm() cannot be called with an alarm time <= 0";

describe("alarms differential: setAlarm arguments", () => {
  it("setAlarm: times ≤ 0, NaN, invalid Dates and non-dates are refused with the platform's texts", async () => {
    const results = await expectSameAsWorkerd([
      { op: "setAlarm", time: 0 },
      { op: "setAlarm", time: -1 },
      { op: "setAlarm", time: enc(-0) },
      { op: "setAlarm", time: enc(Number.NaN) },
      { op: "setAlarm", time: enc(new Date(Number.NaN)) },
      { op: "setAlarm", time: "soon" },
      { op: "setAlarm", time: enc(String(FAR_FUTURE_MS)) },
      { op: "setAlarm", time: enc(undefined) },
      { op: "setAlarm", time: null },
      { op: "setAlarm", time: enc({ getTime: FAR_FUTURE_MS }) },
      { op: "getAlarm" },
    ]);
    // The documented texts (workerd-semantics §6), so a failure says which side is off.
    expect(results.slice(0, 2)).toEqual([typeError(AT_OR_BEFORE_ZERO), typeError(AT_OR_BEFORE_ZERO)]);
    expect(results.slice(3, 5)).toEqual([typeError(NOT_A_DATE), typeError(NOT_A_DATE)]);
    expect(results[5]).toEqual(typeError(NOT_OF_TYPE_DATE));
    expect(results.at(-1)).toEqual(ok(null));
  });

  it("setAlarm: infinities, huge values, fractions around 0 and the date-range limits", async () => {
    const ops: Op[] = [
      { op: "setAlarm", time: enc(Number.POSITIVE_INFINITY) },
      { op: "setAlarm", time: enc(Number.NEGATIVE_INFINITY) },
      { op: "setAlarm", time: 0.5 },
      { op: "setAlarm", time: -0.5 },
      { op: "setAlarm", time: -9_223_372_036_854 },
      { op: "setAlarm", time: enc(10n ** 15n) },
      { op: "setAlarm", time: enc(new Date(Date.UTC(2189, 11, 31, 23, 59, 59, 999))) },
      { op: "getAlarm" },
      // Where the two differ (pending mismatches alarm-time-upper-limit / -lower-limit): masked
      // below; no getAlarm follows an accepted one, so nothing else can hide behind the masks.
      { op: "setAlarm", time: enc(new Date(Date.UTC(2190, 0, 1))) },
      { op: "setAlarm", time: 9_223_372_036_854 },
      { op: "setAlarm", time: 9_223_372_036_855 },
      { op: "setAlarm", time: enc(8.64e15 + 1) },
      { op: "setAlarm", time: enc(Number.MAX_VALUE) },
      { op: "setAlarm", time: -9_223_372_036_855 },
      { op: "setAlarm", time: enc(-Number.MAX_VALUE) },
      { op: "setAlarm", time: enc(new Date(Date.UTC(2189, 0, 1))) },
      { op: "getAlarm" },
    ];
    const { workerd, ours } = await bothTranscripts(ops);
    expect(workerd.slice(2, 5)).toEqual([
      typeError(AT_OR_BEFORE_ZERO),
      typeError(AT_OR_BEFORE_ZERO),
      typeError(AT_OR_BEFORE_ZERO),
    ]);
    expect(workerd[7]).toEqual(ok(Date.UTC(2189, 11, 31, 23, 59, 59, 999)));
    // workerd's real limits: kj::Date's int64 nanoseconds, whatever the message says.
    expect(workerd.slice(8, 15)).toEqual([
      ok(undefined),
      ok(undefined),
      typeError("This API doesn't support dates after 2189."),
      typeError("This API doesn't support dates after 2189."),
      typeError("This API doesn't support dates after 2189."),
      typeError("This API doesn't support dates before 1687."),
      typeError("This API doesn't support dates before 1687."),
    ]);
    expect(maskPendingMismatches(ops, workerd, ours)).toEqual(workerd);
  });

  it("setAlarm: fractional milliseconds are truncated, for numbers and Dates", async () => {
    const results = await expectSameAsWorkerd([
      { op: "setAlarm", time: FAR_FUTURE_MS + 0.9 },
      { op: "getAlarm" },
      { op: "setAlarm", time: FAR_FUTURE_MS + 7.5 },
      { op: "getAlarm" },
      { op: "setAlarm", time: enc(new Date(FAR_FUTURE_MS + 3)) },
      { op: "getAlarm" },
    ]);
    expect([results[1], results[3], results[5]]).toEqual([
      ok(FAR_FUTURE_MS),
      ok(FAR_FUTURE_MS + 7),
      ok(FAR_FUTURE_MS + 3),
    ]);
  });

  it("setAlarm: a time in the past is clamped to now", async () => {
    const results = await expectSameAsWorkerd([
      { op: "setAlarm", time: 1_000 },
      { op: "getAlarm" },
      { op: "setAlarm", time: enc(new Date(1)) },
      { op: "getAlarm" },
    ]);
    expect([results[1], results[3]]).toEqual([ok(ABOUT_NOW), ok(ABOUT_NOW)]);
  });

  it("setAlarm: the same value twice keeps one alarm with that time", async () => {
    const results = await expectSameAsWorkerd([
      { op: "setAlarm", time: FAR_FUTURE_MS },
      { op: "setAlarm", time: FAR_FUTURE_MS },
      { op: "getAlarm" },
      { op: "setAlarm", time: enc(new Date(FAR_FUTURE_MS)) },
      { op: "getAlarm" },
    ]);
    expect(results).toEqual([ok(undefined), ok(undefined), ok(FAR_FUTURE_MS), ok(undefined), ok(FAR_FUTURE_MS)]);
  });
});

describe("alarms differential: getAlarm and deleteAlarm", () => {
  it("deleteAlarm: returns undefined and is idempotent, with or without an alarm", async () => {
    const results = await expectSameAsWorkerd([
      { op: "deleteAlarm" },
      { op: "getAlarm" },
      { op: "setAlarm", time: FAR_FUTURE_MS },
      { op: "deleteAlarm" },
      { op: "deleteAlarm" },
      { op: "getAlarm" },
    ]);
    expect(results).toEqual([ok(undefined), ok(null), ok(undefined), ok(undefined), ok(undefined), ok(null)]);
  });

  it("getAlarm: a later setAlarm replaces the time, earlier or later", async () => {
    await expectSameAsWorkerd([
      { op: "setAlarm", time: FAR_FUTURE_MS },
      { op: "setAlarm", time: FAR_FUTURE_MS + 60_000 },
      { op: "getAlarm" },
      { op: "setAlarm", time: FAR_FUTURE_MS - 60_000 },
      { op: "getAlarm" },
      { op: "sync" },
      { op: "getAlarm" },
    ]);
  });
});

describe("alarms differential: transactions", () => {
  it("transaction: setAlarm and deleteAlarm roll back with rollback() and with a throw", async () => {
    const results = await expectSameAsWorkerd([
      { op: "transaction", ops: [{ op: "setAlarm", time: FAR_FUTURE_MS }, { op: "getAlarm" }, { op: "rollback" }] },
      { op: "getAlarm" },
      {
        op: "transaction",
        ops: [
          { op: "setAlarm", time: FAR_FUTURE_MS },
          { op: "throw", message: "roll back" },
        ],
      },
      { op: "getAlarm" },
      { op: "setAlarm", time: FAR_FUTURE_MS },
      { op: "transaction", ops: [{ op: "deleteAlarm" }, { op: "getAlarm" }, { op: "rollback" }] },
      { op: "getAlarm" },
      {
        op: "transaction",
        ops: [
          { op: "setAlarm", time: FAR_FUTURE_MS + 1 },
          { op: "throw", message: "roll back" },
        ],
      },
      { op: "getAlarm" },
    ]);
    expect([results[1], results[3], results[6], results[8]]).toEqual([
      ok(null),
      ok(null),
      ok(FAR_FUTURE_MS),
      ok(FAR_FUTURE_MS),
    ]);
  });

  it("transaction: a committed setAlarm stays, and txn.getAlarm sees it inside", async () => {
    const results = await expectSameAsWorkerd([
      { op: "transaction", ops: [{ op: "setAlarm", time: FAR_FUTURE_MS + 0.4 }, { op: "getAlarm" }] },
      { op: "getAlarm" },
      { op: "transaction", ops: [{ op: "deleteAlarm" }, { op: "deleteAlarm" }, { op: "getAlarm" }] },
      { op: "getAlarm" },
      { op: "transaction", ops: [{ op: "setAlarm", time: 0 }, { op: "getAlarm" }] },
    ]);
    expect([results[1], results[3]]).toEqual([ok(FAR_FUTURE_MS), ok(null)]);
  });
});

describe("alarms differential: deleteAll", () => {
  const deleteAllWithAlarm: Op[] = [
    { op: "setAlarm", time: FAR_FUTURE_MS },
    { op: "put", key: "a", value: 1 },
    { op: "deleteAll" },
    { op: "getAlarm" },
    { op: "list" },
    { op: "transaction", ops: [{ op: "setAlarm", time: FAR_FUTURE_MS + 1 }, { op: "deleteAll" }, { op: "getAlarm" }] },
    { op: "getAlarm" },
  ];

  it(`deleteAll: keeps the alarm under compat date ${DEFAULT_COMPATIBILITY_DATE} (our default)`, async () => {
    const results = await expectSameAsWorkerd(deleteAllWithAlarm, DEFAULT_COMPATIBILITY_DATE);
    expect(results[3]).toEqual(ok(FAR_FUTURE_MS));
  });

  it(`deleteAll: deletes the alarm under compat date ${DELETE_ALL_DELETES_ALARM_DATE} (deleteAllDeletesAlarm: true)`, async () => {
    const results = await expectSameAsWorkerd(deleteAllWithAlarm, DELETE_ALL_DELETES_ALARM_DATE);
    expect(results[3]).toEqual(ok(null));
  });
});

interface Attempt {
  retryCount: number;
  isRetry: boolean;
  scheduledTime: number;
  alarmInHandler: number | null;
}
interface ProbeState {
  attempts: Attempt[];
  alarm: number | null;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The probe's state (fails the test on an error response). */
async function stateOf(side: ObjectSide): Promise<ProbeState> {
  const outcome = await side.request("/state");
  if (!outcome.ok) throw new Error(`/state failed: ${outcome.name}: ${outcome.error}`);
  return outcome.body as ProbeState;
}

/** Polls until `attempts` attempts were recorded, then waits `settleMs` and reads the state again. */
async function afterAttempts(side: ObjectSide, attempts: number, deadlineMs: number): Promise<ProbeState> {
  while ((await stateOf(side)).attempts.length < attempts) {
    if (Date.now() > deadlineMs) throw new Error(`fewer than ${attempts} alarm attempts before the deadline`);
    await sleep(50);
  }
  // Well inside the ≥ 2 s before a retry, and long after the attempt's own commit.
  await sleep(300);
  return stateOf(side);
}

/**
 * What a client sees of an alarm that fails once: the state between the attempts and after the
 * retry, with the scheduled time replaced by "armed" once it is checked to be what `/arm` set.
 */
async function failOnceThenRetry(side: ObjectSide) {
  const armed = await side.request("/arm");
  if (!armed.ok) throw new Error(`/arm failed: ${armed.name}: ${armed.error}`);
  const armedMs = armed.body as number;
  const deadlineMs = Date.now() + 8_000;
  const between = await afterAttempts(side, 1, deadlineMs);
  const after = await afterAttempts(side, 2, deadlineMs);
  const named = (ms: number | null) => (ms === armedMs ? "armed" : ms);
  const view = (state: ProbeState) => ({
    attempts: state.attempts.map((a) => ({
      ...a,
      scheduledTime: named(a.scheduledTime),
      alarmInHandler: named(a.alarmInHandler),
    })),
    alarm: named(state.alarm),
  });
  return { between: view(between), after: view(after) };
}

describe("alarms differential: firing (real clock on both sides)", () => {
  it("alarm: a handler that throws once is retried with retryCount 1, and getAlarm is null inside it", async () => {
    const context = await ObjectContext.create(classFromSource(ALARM_PROBE_SOURCE, "AlarmProbe"), {
      id: randomUUID(),
    });
    try {
      // Both at once: the retry waits ~2-2.5 s on each side.
      const [workerd, ours] = await Promise.all([
        failOnceThenRetry(await workerdSide(mf, "alarm-probe", randomUUID())),
        failOnceThenRetry(ourSide(context)),
      ]);
      const first = { retryCount: 0, isRetry: false, scheduledTime: "armed", alarmInHandler: null };
      const retry = { retryCount: 1, isRetry: true, scheduledTime: "armed", alarmInHandler: null };
      // Between the attempts the original time is still stored; after the successful retry it is gone.
      expect(workerd).toEqual({
        between: { attempts: [first], alarm: "armed" },
        after: { attempts: [first, retry], alarm: null },
      });
      expect(ours).toEqual(workerd);
    } finally {
      await context.close();
    }
  }, 15_000);

  it("setAlarm: a class without alarm() is refused outside the constructor, on both", async () => {
    const context = await ObjectContext.create(classFromSource(NO_HANDLER_SOURCE, "NoHandler"), {
      id: randomUUID(),
    });
    try {
      const workerd = await (await workerdSide(mf, "no-handler", randomUUID())).request("/");
      const ours = await ourSide(context).request("/");
      expect(workerd).toEqual({
        ok: true,
        status: 200,
        body: {
          name: "TypeError",
          message: "Your Durable Object class must have an alarm() handler in order to call setAlarm()",
        },
      });
      expect(ours).toEqual(workerd);
    } finally {
      await context.close();
    }
  });
});
