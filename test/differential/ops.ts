/**
 * Transcripts: the operations a differential test performs, and the one runner that performs them
 * against any `DurableObjectStorage` (workerd's `ctx.storage` inside the worker, or ours in Node).
 *
 * A transcript is plain JSON (values inside it use {@link Encoded} from `transcript-codec`), and so
 * is its result, so both sides produce directly comparable output.
 *
 * **Why a factory:** the worker script embeds `createTranscriptRunner.toString()`, so the runner
 * must only use its parameter (the codec) and globals. Types are erased by the TS transform.
 *
 * @example
 * ```ts
 * const results = await runOnStorage(storage, [
 *   { op: "put", key: "a", value: 1 },
 *   { op: "list", options: { $: "object", v: [["reverse", true]] } },
 * ]);
 * ```
 */
import type { DurableObjectStorage } from "@cloudflare/workers-types";
import { createTranscriptCodec, type Encoded, type TranscriptCodec } from "./transcript-codec";

/** A key argument: storage converts non-strings with `String()`, so numbers are allowed too. */
export type KeyArg = string | number;

/** What to read from a SQL cursor after `exec`. */
export const SQL_READ_MODES = ["toArray", "raw", "one", "next", "nextShape", "none"] as const;
/** One of {@link SQL_READ_MODES}. */
export type SqlReadMode = (typeof SQL_READ_MODES)[number];

/** Operations valid both at top level and on a `txn` inside `transaction()`. */
export type KvOp =
  | { readonly op: "get"; readonly key: KeyArg }
  | { readonly op: "getMany"; readonly keys: readonly KeyArg[] }
  | { readonly op: "put"; readonly key: KeyArg; readonly value: Encoded }
  | { readonly op: "putMany"; readonly entries: readonly (readonly [string, Encoded])[] }
  | { readonly op: "delete"; readonly key: KeyArg }
  | { readonly op: "deleteMany"; readonly keys: readonly KeyArg[] }
  /** `options` is encoded so that invalid options (NaN, strings, Infinity) can be sent too. */
  | { readonly op: "list"; readonly options?: Encoded }
  | { readonly op: "deleteAll" }
  | { readonly op: "getAlarm" }
  /** `time` is encoded: a number or a Date (or something invalid). */
  | { readonly op: "setAlarm"; readonly time: Encoded }
  | { readonly op: "deleteAlarm" };

/** Synchronous operations: the SQL API, `storage.kv`, and `transactionSync`. */
export type SyncOp =
  | {
      readonly op: "sql";
      readonly query: string;
      readonly bindings?: readonly Encoded[];
      readonly read?: SqlReadMode;
    }
  | { readonly op: "kvGet"; readonly key: KeyArg }
  | { readonly op: "kvPut"; readonly key: KeyArg; readonly value: Encoded }
  | { readonly op: "kvDelete"; readonly key: KeyArg }
  | { readonly op: "kvList"; readonly options?: Encoded }
  | { readonly op: "databaseSize" }
  /** Runs `ops` in `transactionSync`; `throwAtEnd` makes the callback throw so it rolls back. */
  | { readonly op: "transactionSync"; readonly ops: readonly SyncOp[]; readonly throwAtEnd?: boolean };

/**
 * Every operation. Inside a `transaction`, KV ops go to `txn`, `rollback` calls `txn.rollback()`,
 * `throw` makes the closure throw (so the transaction rolls back), and a nested `transaction` calls
 * `storage.transaction()` again. `leakedTxn` calls a method on the txn of the last finished
 * transaction (to check the "already committed" errors).
 */
export type Op =
  | KvOp
  | SyncOp
  | { readonly op: "sync" }
  | { readonly op: "transaction"; readonly ops: readonly Op[] }
  | { readonly op: "rollback" }
  | { readonly op: "throw"; readonly message: string }
  | { readonly op: "leakedTxn"; readonly method: string; readonly args?: readonly Encoded[] };

/** The result of one operation. `inner` holds the results of a transaction's own operations. */
export type OpResult =
  | { readonly ok: true; readonly value: Encoded; readonly inner?: readonly OpResult[] }
  | {
      readonly ok: false;
      readonly error: { readonly name: string; readonly message: string };
      readonly inner?: readonly OpResult[];
    };

/** The runner returned by {@link createTranscriptRunner}. */
export interface TranscriptRunner {
  runOps(storage: DurableObjectStorage, ops: readonly Op[]): Promise<OpResult[]>;
}

/**
 * Builds the runner around a codec. Self-contained on purpose (see the module comment): it reaches
 * storage methods dynamically so that a missing or extra method shows up as a transcript
 * difference rather than a crash.
 */
export function createTranscriptRunner(codec: TranscriptCodec): TranscriptRunner {
  type Callable = Record<string, (...args: unknown[]) => unknown>;
  type Result = OpResult;

  function describeError(error: unknown): { name: string; message: string } {
    if (error !== null && typeof error === "object" && "message" in error) {
      const named = error as { name?: unknown; message?: unknown };
      return { name: String(named.name), message: String(named.message) };
    }
    return { name: `(thrown ${typeof error})`, message: String(error) };
  }

  function call(target: unknown, method: string, args: unknown[]): unknown {
    const fn = (target as Callable)[method];
    if (typeof fn !== "function") throw new TypeError(`${method} is not a function`);
    return fn.apply(target, args);
  }

  function readCursor(cursor: unknown, mode: string): Encoded {
    const c = cursor as {
      columnNames: unknown;
      rowsRead: number;
      rowsWritten: number;
      toArray(): unknown[];
      one(): unknown;
      next(): object;
      raw(): { toArray(): unknown[]; next(): object };
    };
    const out: Record<string, unknown> = {
      columnNames: c.columnNames,
      rowsReadAfterExec: c.rowsRead,
      rowsWrittenAfterExec: c.rowsWritten,
    };
    try {
      if (mode === "toArray") out.rows = c.toArray();
      else if (mode === "raw") out.rows = c.raw().toArray();
      else if (mode === "one") out.rows = [c.one()];
      else if (mode === "next") out.rows = [c.next(), c.next()];
      else if (mode === "nextShape") {
        // The exact object next() returns at the end: its own keys, in order, and their values.
        const shape = (r: object) => Object.entries(r).map(([k, v]) => [k, v === undefined ? "undefined" : v]);
        out.rows = [shape(c.next()), shape(c.next()), shape(c.raw().next())];
      }
    } catch (error) {
      out.readError = describeError(error);
    }
    out.rowsRead = c.rowsRead;
    out.rowsWritten = c.rowsWritten;
    // Drain what is left so the statement is reset: in workerd an unfinished statement (say an
    // unread INSERT … RETURNING) makes the implicit commit fail with "cannot commit transaction -
    // SQL statements in progress: SQLITE_BUSY" and the object breaks with an internal error.
    try {
      c.toArray();
    } catch {
      // Already reported as readError (or the cursor was canceled); nothing left to release.
    }
    return codec.encode(out);
  }

  function runSync(storage: DurableObjectStorage, op: SyncOp): Result {
    const s = storage as unknown as { sql: Callable & { databaseSize: number }; kv: Callable };
    try {
      switch (op.op) {
        case "sql": {
          const bindings = (op.bindings ?? []).map((b) => codec.decode(b));
          const cursor = call(s.sql, "exec", [op.query, ...bindings]);
          return { ok: true, value: readCursor(cursor, op.read ?? "toArray") };
        }
        case "kvGet":
          return { ok: true, value: codec.encode(call(s.kv, "get", [op.key])) };
        case "kvPut":
          return { ok: true, value: codec.encode(call(s.kv, "put", [op.key, codec.decode(op.value)])) };
        case "kvDelete":
          return { ok: true, value: codec.encode(call(s.kv, "delete", [op.key])) };
        case "kvList": {
          const args = op.options === undefined ? [] : [codec.decode(op.options)];
          return { ok: true, value: codec.encode([...(call(s.kv, "list", args) as Iterable<unknown>)]) };
        }
        case "databaseSize":
          return { ok: true, value: codec.encode(s.sql.databaseSize) };
        case "transactionSync": {
          const inner: Result[] = [];
          try {
            const value = call(storage, "transactionSync", [
              () => {
                for (const innerOp of op.ops) inner.push(runSync(storage, innerOp));
                if (op.throwAtEnd) throw new Error("transactionSync callback threw.");
                return inner.length;
              },
            ]);
            return { ok: true, value: codec.encode(value), inner };
          } catch (error) {
            return { ok: false, error: describeError(error), inner };
          }
        }
      }
    } catch (error) {
      return { ok: false, error: describeError(error) };
    }
  }

  // The last transaction's txn object, kept so that `leakedTxn` can use it after the closure ended.
  let leaked: unknown;

  async function runOne(storage: DurableObjectStorage, target: unknown, op: Op): Promise<Result> {
    try {
      switch (op.op) {
        case "get":
          return { ok: true, value: codec.encode(await call(target, "get", [op.key])) };
        case "getMany":
          return { ok: true, value: codec.encode(await call(target, "get", [[...op.keys]])) };
        case "put":
          return { ok: true, value: codec.encode(await call(target, "put", [op.key, codec.decode(op.value)])) };
        case "putMany": {
          const entries: Record<string, unknown> = {};
          for (const [key, value] of op.entries) entries[key] = codec.decode(value);
          return { ok: true, value: codec.encode(await call(target, "put", [entries])) };
        }
        case "delete":
          return { ok: true, value: codec.encode(await call(target, "delete", [op.key])) };
        case "deleteMany":
          return { ok: true, value: codec.encode(await call(target, "delete", [[...op.keys]])) };
        case "list": {
          const args = op.options === undefined ? [] : [codec.decode(op.options)];
          return { ok: true, value: codec.encode(await call(target, "list", args)) };
        }
        case "deleteAll":
          return { ok: true, value: codec.encode(await call(target, "deleteAll", [])) };
        case "getAlarm":
          return { ok: true, value: codec.encode(await call(target, "getAlarm", [])) };
        case "setAlarm":
          return { ok: true, value: codec.encode(await call(target, "setAlarm", [codec.decode(op.time)])) };
        case "deleteAlarm":
          return { ok: true, value: codec.encode(await call(target, "deleteAlarm", [])) };
        case "sync":
          return { ok: true, value: codec.encode(await call(target, "sync", [])) };
        case "rollback":
          return { ok: true, value: codec.encode(call(target, "rollback", [])) };
        case "throw":
          // Only meaningful inside a transaction, where runTransaction turns it into a throw.
          return { ok: false, error: { name: "Error", message: op.message } };
        case "leakedTxn": {
          const args = (op.args ?? []).map((a) => codec.decode(a));
          return { ok: true, value: codec.encode(await call(leaked, op.method, args)) };
        }
        case "transaction":
          return await runTransaction(storage, op.ops);
        default:
          return runSync(storage, op);
      }
    } catch (error) {
      return { ok: false, error: describeError(error) };
    }
  }

  async function runTransaction(storage: DurableObjectStorage, ops: readonly Op[]): Promise<Result> {
    const inner: Result[] = [];
    try {
      const value = await call(storage, "transaction", [
        async (txn: unknown) => {
          leaked = txn;
          for (const op of ops) {
            if (op.op === "throw") throw new Error(op.message);
            inner.push(await runOne(storage, txn, op));
          }
          return inner.length;
        },
      ]);
      return { ok: true, value: codec.encode(value), inner };
    } catch (error) {
      return { ok: false, error: describeError(error), inner };
    }
  }

  async function runOps(storage: DurableObjectStorage, ops: readonly Op[]): Promise<OpResult[]> {
    const results: OpResult[] = [];
    // One op at a time, each awaited: the transcript compares semantics, not interleavings.
    for (const op of ops) results.push(await runOne(storage, storage, op));
    return results;
  }

  return { runOps };
}

/**
 * Runs a transcript against any implementation of `DurableObjectStorage` in this process.
 *
 * @example
 * ```ts
 * const storage = await ObjectStorage.open({ backend: "sqlite" });
 * const results = await runOnStorage(storage, [{ op: "get", key: "a" }]);
 * ```
 */
export function runOnStorage(storage: DurableObjectStorage, ops: readonly Op[]): Promise<OpResult[]> {
  return createTranscriptRunner(createTranscriptCodec()).runOps(storage, ops);
}
