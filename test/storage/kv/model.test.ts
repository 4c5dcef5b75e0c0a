/**
 * Model-based tests: random operation sequences run against ObjectStorage and against a plain Map,
 * whose list() sorts with a byte-wise UTF-8 comparison and whose option checks are written from the
 * platform's rules (not from the implementation). Results and errors must match exactly.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ObjectStorage } from "../../../src/storage/object-storage";
import type { ListOptions } from "../../../src/storage/options";
import type { ObjectTransaction } from "../../../src/storage/transaction";
import { BACKENDS, openStorage } from "./harness";
import { describeError, macrotask, type Outcome, outcome, utf8Compare } from "./helpers";

/** The key space: canonical-equivalent pairs, NUL, the UTF-16/UTF-8 order trap, the empty key. */
const KEYS = ["", "a\u0000", "é", "e\u0301", "\uFFFF", "😀", "a", "ab", "b"] as const;
/** List bounds: the keys plus strings between and beyond them. */
const BOUNDS = [...KEYS, "a\u0000\u0000", "aa", "e", "c", "\u{10FFFF}"] as const;

type Model = Map<string, number>;
interface Real {
  storage: ObjectStorage;
}

const key = fc.constantFrom(...KEYS);
const value = fc.integer({ min: 0, max: 99 });
const limit = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 5 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(0, -1, 1.5, "2", Number.POSITIVE_INFINITY, Number.NaN, 2 ** 31, 2 ** 31 - 0.5),
  },
);
const listOptions: fc.Arbitrary<ListOptions> = fc.record(
  {
    start: fc.constantFrom(...BOUNDS),
    startAfter: fc.constantFrom(...BOUNDS),
    end: fc.constantFrom(...BOUNDS),
    prefix: fc.constantFrom(...BOUNDS),
    reverse: fc.boolean(),
    limit: limit as fc.Arbitrary<number>,
  },
  { requiredKeys: [] },
);

// ------------------------------------------------------------------ the model's semantics

const ok = (v: unknown): Outcome => ({ ok: true, value: v });
const err = (e: Error): Outcome => ({ ok: false, error: describeError(e) });

function modelList(model: Model, o: ListOptions): Outcome {
  // WebIDL reads the options dictionary (converting `limit` to a 32-bit int, which can fail) before
  // the method body runs its own checks: start+startAfter, then "positive".
  let n: number | undefined;
  if (o.limit !== undefined) {
    const x = Number(o.limit);
    // The range is checked on the number before its fraction is dropped (2147483647.5 is out).
    if (Number.isFinite(x) && (x > 2147483647 || x < -2147483648)) {
      return err(new TypeError("Value out of range. Must be between -2147483648 and 2147483647 (inclusive)."));
    }
    n = Number.isFinite(x) ? Math.trunc(x) : 0;
  }
  if (o.start !== undefined && o.startAfter !== undefined) {
    return err(new TypeError("list() cannot be called with both start and startAfter values."));
  }
  if (n !== undefined && n <= 0) return err(new TypeError("List limit must be positive."));
  const keys = [...model.keys()]
    .filter((k) => o.start === undefined || utf8Compare(k, o.start) >= 0)
    .filter((k) => o.startAfter === undefined || utf8Compare(k, o.startAfter) > 0)
    .filter((k) => o.end === undefined || utf8Compare(k, o.end) < 0)
    .filter((k) => o.prefix === undefined || k.startsWith(o.prefix))
    .sort(utf8Compare);
  if (o.reverse) keys.reverse();
  return ok(new Map((n === undefined ? keys : keys.slice(0, n)).map((k) => [k, model.get(k)])));
}

function modelGetMany(model: Model, keys: readonly string[]): Map<string, number> {
  const present = [...new Set(keys)].filter((k) => model.has(k)).sort(utf8Compare);
  return new Map(present.map((k) => [k, model.get(k) as number]));
}

function modelDeleteMany(model: Model, keys: readonly string[]): number {
  let n = 0;
  for (const k of new Set(keys)) if (model.delete(k)) n++;
  return n;
}

/** Something that has the key-value surface shared by storage and txn. */
type KvSurface = Pick<ObjectStorage, "get" | "put" | "delete" | "list"> | ObjectTransaction;

/** One key-value operation, applicable to storage or a txn, and to the model. */
type Op =
  | { t: "get"; key: string }
  | { t: "getMany"; keys: string[] }
  | { t: "put"; key: string; value: number; awaited: boolean }
  | { t: "putMany"; entries: Array<[string, number | undefined]> }
  | { t: "delete"; key: string }
  | { t: "deleteMany"; keys: string[] }
  | { t: "list"; options: ListOptions };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant("get" as const), key }),
  fc.record({ t: fc.constant("getMany" as const), keys: fc.array(key, { maxLength: 5 }) }),
  { weight: 3, arbitrary: fc.record({ t: fc.constant("put" as const), key, value, awaited: fc.boolean() }) },
  fc.record({
    t: fc.constant("putMany" as const),
    entries: fc.array(fc.tuple(key, fc.option(value, { nil: undefined })), { maxLength: 4 }),
  }),
  fc.record({ t: fc.constant("delete" as const), key }),
  fc.record({ t: fc.constant("deleteMany" as const), keys: fc.array(key, { maxLength: 5 }) }),
  { weight: 2, arbitrary: fc.record({ t: fc.constant("list" as const), options: listOptions }) },
);

/** Applies `o` to the model and returns the expected outcome. */
function applyModel(model: Model, o: Op): Outcome {
  switch (o.t) {
    case "get":
      return ok(model.get(o.key));
    case "getMany":
      return ok(modelGetMany(model, o.keys));
    case "put":
      model.set(o.key, o.value);
      return ok(undefined);
    case "putMany":
      for (const [k, v] of Object.entries(Object.fromEntries(o.entries))) if (v !== undefined) model.set(k, v);
      return ok(undefined);
    case "delete":
      return ok(model.delete(o.key));
    case "deleteMany":
      return ok(modelDeleteMany(model, o.keys));
    case "list":
      return modelList(model, o.options);
  }
}

/** Issues `o` (synchronously: the call's result is fixed at call time) and returns its promise. */
function issue(target: KvSurface, o: Op): Promise<unknown> {
  switch (o.t) {
    case "get":
      return target.get(o.key);
    case "getMany":
      return target.get(o.keys);
    case "put":
      return target.put(o.key, o.value);
    case "putMany":
      return target.put(Object.fromEntries(o.entries));
    case "delete":
      return target.delete(o.key);
    case "deleteMany":
      return target.delete(o.keys);
    case "list":
      return target.list(o.options);
  }
}

const show = (o: unknown): string => fc.stringify(o);

// ------------------------------------------------------------------ commands

class OpCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly o: Op) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const expected = applyModel(model, this.o);
    const p = issue(real.storage, this.o);
    if (this.o.t === "put" && !this.o.awaited) {
      // Un-awaited write: later commands must still see it.
      p.catch(() => {});
      return;
    }
    expect(await outcome(p), show(this.o)).toEqual(expected);
  }
  toString(): string {
    return show(this.o);
  }
}

class DeleteAllCommand implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    model.clear();
    expect(await real.storage.deleteAll()).toBeUndefined();
  }
  toString(): string {
    return "deleteAll()";
  }
}

class FlushCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly how: "macrotask" | "sync") {}
  check(): boolean {
    return true;
  }
  async run(_model: Model, real: Real): Promise<void> {
    if (this.how === "sync") await real.storage.sync();
    else await macrotask();
  }
  toString(): string {
    return `flush(${this.how})`;
  }
}

class TransactionCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly ops: Op[],
    readonly ending: "commit" | "rollback" | "throw",
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const working: Model = new Map(model);
    const failure = new Error("closure failed");
    const result = outcome(
      real.storage.transaction(async (txn) => {
        for (const o of this.ops) {
          const expected = applyModel(working, o);
          const p = issue(txn, o);
          if (o.t === "put" && !o.awaited) {
            p.catch(() => {});
            continue;
          }
          expect(await outcome(p), `txn ${show(o)}`).toEqual(expected);
        }
        if (this.ending === "rollback") txn.rollback();
        if (this.ending === "throw") throw failure;
        return "returned";
      }),
    );
    if (this.ending === "throw") expect(await result).toEqual({ ok: false, error: describeError(failure) });
    else expect(await result).toEqual({ ok: true, value: "returned" });
    if (this.ending === "commit") {
      model.clear();
      for (const [k, v] of working) model.set(k, v);
    }
  }
  toString(): string {
    return `transaction(${this.ops.map(show).join(", ")}; ${this.ending})`;
  }
}

/** After every sequence: the whole content, through every read path, equals the model. */
async function checkFinal(model: Model, storage: ObjectStorage): Promise<void> {
  const expected = modelList(model, {});
  expect(await outcome(storage.list())).toEqual(expected);
  expect(await storage.get([...KEYS])).toEqual(modelGetMany(model, KEYS));
  await storage.sync();
  expect(await outcome(storage.list({ noCache: true }))).toEqual(expected);
}

const commands = [
  op.map((o) => new OpCommand(o)),
  fc.constant(new DeleteAllCommand()),
  fc.constantFrom("macrotask" as const, "sync" as const).map((how) => new FlushCommand(how)),
  fc
    .tuple(fc.array(op, { maxLength: 6 }), fc.constantFrom("commit" as const, "rollback" as const, "throw" as const))
    .map(([ops, ending]) => new TransactionCommand(ops, ending)),
];

describe.each(BACKENDS)("model-based (%s backend)", (backend) => {
  it("ObjectStorage: random operation sequences match a sorted-Map model", async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
        const storage = await openStorage({ backend });
        const model: Model = new Map();
        try {
          await fc.asyncModelRun(() => ({ model, real: { storage } }), cmds);
          await checkFinal(model, storage);
        } finally {
          await storage.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it("ObjectStorage: the same survives a reopen over the same persistence", async () => {
    const { createMemoryPersistence } = await import("../../../src/durability/memory-persistence");
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 25 }), async (cmds) => {
        const persistence = createMemoryPersistence();
        const storage = await openStorage({ backend, persistence });
        const model: Model = new Map();
        await fc.asyncModelRun(() => ({ model, real: { storage } }), cmds);
        await storage.close();
        const reopened = await openStorage({ backend, persistence });
        try {
          await checkFinal(model, reopened);
        } finally {
          await reopened.close();
        }
      }),
      { numRuns: 30 },
    );
  });
});

// ------------------------------------------------------------------ scheduled variant
//
// Under fc.scheduledModelRun each command runs as a scheduled task, and the scheduler releases one
// task at a time: a command that awaited a promise wrapped with `s.schedule` would wait for itself.
// So commands issue their call at once (its result is fixed at call time), wrap the promise with
// `s.schedule`, and check it whenever the scheduler delivers it, interleaved in any order with
// later commands and other deliveries. Mismatches are collected and asserted after the run.

/** Issues an op now and checks its outcome whenever the scheduler delivers it. */
class ScheduledOpCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly ops: Op[],
    readonly s: fc.Scheduler,
    readonly mismatches: string[],
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    for (const o of this.ops) {
      const expected = applyModel(model, o);
      const delivered = this.s.schedule(
        issue(real.storage, o).then(
          (v) => ({ ok: true, value: v }) as Outcome,
          (e: unknown) => ({ ok: false, error: describeError(e) }) as Outcome,
        ),
        show(o),
      );
      void delivered.then((got) => {
        try {
          expect(got).toEqual(expected);
        } catch {
          this.mismatches.push(`${show(o)}: expected ${show(expected)}, got ${show(got)}`);
        }
      });
    }
  }
  toString(): string {
    return `issue(${this.ops.map(show).join(", ")})`;
  }
}

class SyncCommand implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true;
  }
  async run(_model: Model, real: Real): Promise<void> {
    await real.storage.sync();
  }
  toString(): string {
    return "sync()";
  }
}

describe.each(BACKENDS)("scheduled model-based (%s backend)", (backend) => {
  it("ObjectStorage: shuffled promise resolution keeps sequential semantics", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(
          fc.oneof(
            {
              weight: 6,
              arbitrary: fc.array(op, { minLength: 1, maxLength: 4 }).map((ops) => ({ kind: "ops" as const, ops })),
            },
            { weight: 1, arbitrary: fc.constant({ kind: "sync" as const }) },
            { weight: 1, arbitrary: fc.constant({ kind: "macrotask" as const }) },
            { weight: 1, arbitrary: fc.constant({ kind: "deleteAll" as const }) },
          ),
          { maxLength: 20 },
        ),
        async (s, plan) => {
          const storage = await openStorage({ backend });
          const model: Model = new Map();
          const mismatches: string[] = [];
          const cmds: Array<fc.AsyncCommand<Model, Real>> = plan.map((step) =>
            step.kind === "ops"
              ? new ScheduledOpCommand(step.ops, s, mismatches)
              : step.kind === "sync"
                ? new SyncCommand()
                : step.kind === "macrotask"
                  ? new FlushCommand("macrotask")
                  : new DeleteAllCommand(),
          );
          try {
            await fc.scheduledModelRun(s, () => ({ model, real: { storage } }), cmds);
            expect(mismatches).toEqual([]);
            await checkFinal(model, storage);
          } finally {
            await storage.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
