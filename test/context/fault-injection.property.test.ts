/**
 * Fault injection: write failures at random points (seeded fast-check properties), and after each
 * one the reset rules of issue 4: the callers get the platform's error, held messages are
 * discarded, the next event gets a fresh instance over exactly the confirmed state, never half a
 * batch.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import { type AppendFailurePoint, FaultyPersistence } from "../../src/durability/faulty-persistence";
import { WRITE_FAILED_MESSAGE } from "../../src/storage/storage-core";
import { ManualPersistence } from "./helpers";

const KEYS = ["k0", "k1", "k2", "k3", "k4"] as const;

type Write = { key: string; value: number | null };

interface Env {
  sent: number[];
  violations: string[];
  durable: ManualPersistence;
}

let constructed = 0;

class Ledger {
  readonly instanceNo = ++constructed;
  applied = 0;
  constructor(
    readonly ctx: ObjectState,
    readonly env: Env,
  ) {}

  /** Applies `writes` as one batch (one turn), optionally announcing it through sendOutgoing. */
  async apply(id: number, writes: Write[], send: boolean): Promise<number> {
    for (const w of writes) {
      if (w.value === null) void this.ctx.storage.delete(w.key);
      else void this.ctx.storage.put(w.key, w.value);
    }
    this.applied++;
    if (send) {
      await this.ctx.sendOutgoing(() => {
        // The batch's net effect: the last write to each key.
        const net = new Map(writes.map((w) => [w.key, w.value]));
        for (const [key, value] of net) {
          if (value !== null && !this.env.durable.durableKeys.has(key)) {
            this.env.violations.push(`batch ${id}: message sent before ${key} was durable`);
          }
        }
        this.env.sent.push(id);
      });
    }
    return id;
  }

  async dump(): Promise<Record<string, unknown>> {
    return Object.fromEntries(await this.ctx.storage.list());
  }

  whoami(): { instanceNo: number; applied: number } {
    return { instanceNo: this.instanceNo, applied: this.applied };
  }
}

const writeArb: fc.Arbitrary<Write> = fc.record({
  key: fc.constantFrom(...KEYS),
  value: fc.oneof(fc.integer({ min: 0, max: 999 }), fc.constant(null)),
});

const stepArb = fc.record({
  // A put of the batch counter first: deleting absent keys alone commits nothing, so no append would fail.
  writes: fc
    .tuple(fc.integer({ min: 0, max: 999 }), fc.array(writeArb, { maxLength: 6 }))
    .map(([n, rest]): Write[] => [{ key: "batch", value: n }, ...rest]),
  send: fc.boolean(),
  fail: fc.option(fc.constantFrom<AppendFailurePoint>("before-write", "before-write", "before-write", "after-write"), {
    freq: 3,
  }),
});

function applyTo(model: Map<string, number>, writes: Write[]): Map<string, number> {
  const next = new Map(model);
  for (const w of writes) {
    if (w.value === null) next.delete(w.key);
    else next.set(w.key, w.value);
  }
  return next;
}

const asRecord = (m: Map<string, number>): Record<string, number> => Object.fromEntries([...m].sort());

async function newLedger() {
  const durable = new ManualPersistence();
  const persistence = new FaultyPersistence(durable);
  const env: Env = { sent: [], violations: [], durable };
  const context = await ObjectContext.create(Ledger, { env, storage: { persistence } });
  return { context, persistence, env };
}

describe("fault injection", () => {
  test("write failure: at random points, each reset leaves exactly the confirmed state (≥ 100 failures)", async () => {
    let injected = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 8 }), async (steps) => {
        const { context, persistence, env } = await newLedger();
        let model = new Map<string, number>();
        let resets = 0;
        for (const [id, step] of steps.entries()) {
          const before = await context.call<{ instanceNo: number; applied: number }>("whoami");
          if (step.fail !== null) persistence.failNextAppend({ point: step.fail });
          const outcome = await context.call<number>("apply", id, step.writes, step.send).then(
            () => ({ ok: true as const }),
            (e: unknown) => ({ ok: false as const, error: e }),
          );
          if (step.fail === null) {
            expect(outcome.ok).toBe(true);
            model = applyTo(model, step.writes);
            continue;
          }
          injected++;
          resets++;
          // The caller gets the platform's error, and its message was never sent.
          expect(outcome.ok).toBe(false);
          if (!outcome.ok) expect((outcome.error as Error).message).toBe(WRITE_FAILED_MESSAGE);
          expect(context.resets).toBe(resets);
          expect(env.sent).not.toContain(id);
          // The next event: a fresh instance (the constructor ran again) over the confirmed state.
          const after = await context.call<{ instanceNo: number; applied: number }>("whoami");
          expect(after.instanceNo).toBeGreaterThan(before.instanceNo);
          expect(after.applied).toBe(0);
          const state = await context.call<Record<string, unknown>>("dump");
          const withBatch = applyTo(model, step.writes);
          if (step.fail === "before-write") {
            expect(state).toEqual(asRecord(model));
          } else {
            // Stored but reported as failed: the whole batch or none of it, never half.
            expect([asRecord(model), asRecord(withBatch)]).toContainEqual(state);
            if (JSON.stringify(state) === JSON.stringify(asRecord(withBatch))) model = withBatch;
          }
        }
        expect(await context.call("dump")).toEqual(asRecord(model));
        expect(env.violations).toEqual([]);
        await context.close();
      }),
      { seed: 0xfa17, numRuns: 120 },
    );
    expect(injected).toBeGreaterThanOrEqual(100);
  });

  test("write failure: concurrent events, a failure at a random append: acknowledged events survive, each event all or nothing", async () => {
    let injected = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ size: fc.integer({ min: 1, max: 4 }), send: fc.boolean() }), {
          minLength: 2,
          maxLength: 10,
        }),
        fc.integer({ min: 1, max: 6 }),
        async (events, failAt) => {
          const { context, persistence, env } = await newLedger();
          persistence.failAppendAt(failAt);
          const results = await Promise.allSettled(
            events.map((e, id) =>
              context.call<number>(
                "apply",
                id,
                Array.from({ length: e.size }, (_, j) => ({ key: `e${id}/${j}`, value: id })),
                e.send,
              ),
            ),
          );
          if (persistence.appendCalls >= failAt) injected++;
          const state = await context.call<Record<string, unknown>>("dump");
          for (const [id, e] of events.entries()) {
            const present = Array.from({ length: e.size }, (_, j) => `e${id}/${j}` in state);
            // Never half an event's batch.
            expect(new Set(present).size, `event ${id} half applied`).toBe(1);
            const result = results[id];
            if (result?.status === "fulfilled") expect(present[0], `acknowledged event ${id} lost`).toBe(true);
            if (result?.status === "rejected") {
              expect((result.reason as Error).message).toBe(WRITE_FAILED_MESSAGE);
            }
            // A message that left means its event's writes were confirmed (its result may still
            // fail, when a later event's failure resets the object first, as on workerd).
            if (env.sent.includes(id)) expect(present[0], `event ${id} sent before its writes`).toBe(true);
          }
          expect(env.violations).toEqual([]);
          expect(context.resets).toBe(results.some((r) => r.status === "rejected") ? 1 : 0);
          await context.close();
        },
      ),
      { seed: 0xc0c0, numRuns: 80 },
    );
    expect(injected).toBeGreaterThan(0);
  });
});
