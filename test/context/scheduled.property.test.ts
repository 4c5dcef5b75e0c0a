/**
 * fast-check's scheduler shuffles the order in which events arrive and I/O completes (appends
 * become durable, then are acknowledged, each step released in a random order), and checks the
 * two promises of the gates: no acknowledged write is lost, and no message (an event's result or
 * a sendOutgoing callback) leaves before the writes issued before it are durable.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import type { ObjectState } from "../../src/context/object-state";
import type { CommitRecord } from "../../src/durability/commit-record";
import { DelegatingPersistence } from "../../src/durability/delegating-persistence";
import { createMemoryPersistence, type MemoryPersistence } from "../../src/durability/memory-persistence";
import { ObjectStorage } from "../../src/storage/object-storage";
import { nextTurn } from "../../src/util/clock";

/** Appends reach the inner adapter in order, but when, and when they are acknowledged, is up to the scheduler. */
class ScheduledPersistence extends DelegatingPersistence<MemoryPersistence> {
  readonly durableKeys = new Set<string>();
  #chain: Promise<void> = Promise.resolve();

  constructor(readonly s: fc.Scheduler) {
    super(createMemoryPersistence());
  }
  override append(records: readonly CommitRecord[]): Promise<void> {
    const durable = this.#chain.then(async () => {
      await this.s.schedule(Promise.resolve(), "append becomes durable");
      await this.inner.append(records);
      for (const r of records) for (const w of r.kv) if (w.value !== null) this.durableKeys.add(w.key);
    });
    this.#chain = durable;
    // The acknowledgement may come later still, and acknowledgements may overtake each other.
    return durable.then(() => this.s.schedule(Promise.resolve(), "append acknowledged"));
  }
}

type Op = { kind: "put"; unconfirmed: boolean } | { kind: "putAwaitPut" } | { kind: "putAndSend" } | { kind: "read" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("put" as const), unconfirmed: fc.boolean() }),
  fc.constant({ kind: "putAwaitPut" as const }),
  fc.constant({ kind: "putAndSend" as const }),
  fc.constant({ kind: "read" as const }),
);

interface Env {
  s: fc.Scheduler;
  persistence: ScheduledPersistence;
  violations: string[];
  unconfirmed: Set<string>;
}

class Ledger {
  constructor(
    readonly ctx: ObjectState,
    readonly env: Env,
  ) {}

  /** Runs op `i`; returns the keys whose writes (or reads) the result announces. */
  async run(i: number, op: Op): Promise<string[]> {
    const storage = this.ctx.storage;
    switch (op.kind) {
      case "put":
        if (op.unconfirmed) this.env.unconfirmed.add(`w${i}`);
        await storage.put(`w${i}`, i, { allowUnconfirmed: op.unconfirmed });
        return op.unconfirmed ? [] : [`w${i}`];
      case "putAwaitPut":
        await storage.put(`w${i}`, i);
        // Real I/O between two writes: other events may run here.
        await this.env.s.schedule(Promise.resolve(), `event ${i} awaits I/O`);
        await storage.put(`w${i}b`, i);
        return [`w${i}`, `w${i}b`];
      case "putAndSend":
        await storage.put(`w${i}`, i);
        await this.ctx.sendOutgoing(() => {
          if (!this.env.persistence.durableKeys.has(`w${i}`)) {
            this.env.violations.push(`event ${i}: sendOutgoing ran before its write was durable`);
          }
        });
        return [`w${i}`];
      case "read": {
        const seen = [...(await storage.list<number>({ prefix: "w" })).keys()];
        // What a reader reports must be durable too, except writes that opted out.
        return seen.filter((k) => !this.env.unconfirmed.has(k));
      }
    }
  }
}

/** Releases scheduled tasks (in the scheduler's random order) and event-loop turns until `done` settles. */
async function drive(s: fc.Scheduler, done: Promise<unknown>): Promise<void> {
  let finished = false;
  done.then(
    () => {
      finished = true;
    },
    () => {
      finished = true;
    },
  );
  for (let i = 0; i < 20_000 && !finished; i++) {
    if (s.count() > 0) await s.waitOne();
    else await nextTurn();
  }
  if (!finished) throw new Error("the run did not finish: an event or a commit is stuck");
}

function writtenKeys(i: number, op: Op): string[] {
  if (op.kind === "read") return [];
  return op.kind === "putAwaitPut" ? [`w${i}`, `w${i}b`] : [`w${i}`];
}

describe("gates under shuffled event and I/O order", () => {
  test("gates: no acknowledged write is lost and no message leaves before its writes are durable", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(opArb, { minLength: 1, maxLength: 10 }), async (s, ops) => {
        const persistence = new ScheduledPersistence(s);
        const env: Env = { s, persistence, violations: [], unconfirmed: new Set() };
        const context = await ObjectContext.create(Ledger, { env, storage: { persistence } });
        const acknowledged: string[] = [];
        const events = ops.map((op, i) =>
          s
            .schedule(Promise.resolve(), `event ${i} arrives`)
            .then(() => context.call<string[]>("run", i, op))
            .then((keys) => {
              // The result is being released: everything it announces must already be durable.
              for (const k of keys) {
                if (!persistence.durableKeys.has(k)) env.violations.push(`event ${i}: result before ${k} was durable`);
              }
              if (op.kind !== "read") acknowledged.push(...keys);
            }),
        );
        await drive(s, Promise.all(events));
        await drive(s, context.close());
        expect(env.violations).toEqual([]);
        // Reopen what the adapter holds: every acknowledged (indeed every) write is there.
        const reopened = await ObjectStorage.open({ persistence: persistence.inner });
        const stored = await reopened.list<number>({ prefix: "w" });
        for (const k of acknowledged) expect(stored.has(k), `acknowledged ${k} was lost`).toBe(true);
        const all = ops.flatMap((op, i) => writtenKeys(i, op)).sort();
        expect([...stored.keys()].sort()).toEqual(all);
        await reopened.close();
      }),
      { seed: 0x6a7e5, numRuns: 120 },
    );
  });
});
