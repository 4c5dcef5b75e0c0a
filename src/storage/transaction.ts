/**
 * The `txn` object of `storage.transaction(closure)`. Its operations run against the transaction's
 * savepoint in the core; misuse after rollback or after the closure ends fails with the platform's
 * messages, which name the fix.
 */

import { likePlatformPrototype } from "../util/platform-prototype";
import { checkAlarmTime, toAlarmTime } from "./alarm-time";
import { type AsyncApiInterface, argumentTypeError } from "./argument-types";
import { convertDeleteCall, convertGetCall, convertPutCall, type KeyCall, type PutCall } from "./call-arguments";
import { compileListOptions } from "./keys";
import { GET_ALARM_OPTIONS, LIST_OPTIONS, readOptions, SET_ALARM_OPTIONS } from "./option-dictionaries";
import type { GetAlarmOptions, GetOptions, ListOptions, PutOptions, SetAlarmOptions } from "./options";
import { ORPHANED_TRANSACTION_MESSAGE } from "./storage-core";

/**
 * What a transaction delegates to (implemented by ObjectStorage's internals). Its calls take their
 * arguments converted (call-arguments.ts): the transaction converts them once, before it looks at
 * its own state, as the platform does.
 */
export interface TransactionTarget {
  get(call: KeyCall<GetOptions>): unknown;
  put(call: PutCall): void;
  /** Serializes what `put(call)` would write, and discards it. */
  serialize(call: PutCall): void;
  delete(call: KeyCall<PutOptions>): boolean | number;
  list(options: ListOptions | undefined): Map<string, unknown>;
  getAlarm(): number | null;
  /** `ms` converted and checked (alarm-time.ts). */
  setAlarm(ms: number, options: SetAlarmOptions | undefined): void;
  deleteAlarm(options: SetAlarmOptions | undefined): void;
  /** Rolls the savepoint back now. */
  rollback(): void;
  /** Whether the transaction's savepoint is still open (false once an outer one took it down). */
  alive(): boolean;
  /** Throws the storage's own error when it takes no more work (closed or closing, broken). */
  assertUsable(): void;
}

type State = "active" | "rolledBack" | "committed";

/** Set by ObjectTransaction's static block (see {@link finishTransaction}). */
let finishTxn: (txn: ObjectTransaction) => void;

/**
 * Marks a transaction's closure as finished: every later call on `txn` fails with the platform's
 * "already committed" message. For ObjectStorage only; not on the public surface.
 * @internal
 */
export function finishTransaction(txn: ObjectTransaction): void {
  finishTxn(txn);
}

/**
 * The platform's error for `get()` or `delete()` called with no argument at all (an explicit
 * `undefined` is a key like any other there, and here).
 * @internal
 */
export function missingKeyError(method: "get" | "delete", on: AsyncApiInterface): TypeError {
  return argumentTypeError(method, on, 1, "string or Array");
}

/**
 * A transaction handle, type-compatible with the platform's `DurableObjectTransaction`.
 *
 * @example
 * ```ts
 * await storage.transaction(async (txn) => {
 *   const n = (await txn.get<number>("n")) ?? 0;
 *   await txn.put("n", n + 1);
 * });
 * ```
 */
export class ObjectTransaction {
  readonly #target: TransactionTarget;
  #state: State = "active";

  /** @internal */
  constructor(target: TransactionTarget) {
    this.#target = target;
  }

  static {
    likePlatformPrototype(this.prototype, "DurableObjectTransaction");
    // Kept off the public surface: the platform's transaction has no such member (see finishTransaction).
    finishTxn = (txn) => {
      if (txn.#state === "active") txn.#state = "committed";
    };
  }

  /** Reads one key (or several, as a Map) as the transaction sees it. */
  get<T = unknown>(key: string, options?: GetOptions): Promise<T | undefined>;
  get<T = unknown>(keys: string[], options?: GetOptions): Promise<Map<string, T>>;
  get(keyOrKeys: string | string[], options?: GetOptions): Promise<unknown> {
    // biome-ignore lint/complexity/noArguments: tells "no argument" from an explicit undefined without a rest array on the hot path
    if (arguments.length === 0) return Promise.reject(missingKeyError("get", "DurableObjectTransaction"));
    let call: KeyCall<GetOptions> | undefined;
    return this.#run(
      "get",
      () => this.#target.get(call as KeyCall<GetOptions>),
      () => {
        call = convertGetCall(keyOrKeys, options, "DurableObjectTransaction");
      },
    );
  }

  /** Lists keys as the transaction sees them. */
  list<T = unknown>(options?: ListOptions): Promise<Map<string, T>> {
    // The platform converts and checks the options first; an empty range never reaches storage.
    let empty = false;
    let converted: ListOptions | undefined;
    return this.#run(
      "list",
      () => (empty ? new Map() : this.#target.list(converted)),
      () => {
        converted = readOptions(options, LIST_OPTIONS, "list", "DurableObjectTransaction", 1);
        empty = compileListOptions(converted).empty;
      },
      () => empty,
    ) as Promise<Map<string, T>>;
  }

  /** Writes one key, or several. */
  put<T>(key: string, value: T, options?: PutOptions): Promise<void>;
  put<T>(entries: Record<string, T>, options?: PutOptions): Promise<void>;
  put(keyOrEntries: unknown, valueOrOptions?: unknown, options?: PutOptions): Promise<void> {
    let call: PutCall | undefined;
    return this.#run(
      "put",
      () => this.#target.put(call as PutCall),
      () => {
        call = convertPutCall(keyOrEntries, valueOrOptions, options, "DurableObjectTransaction");
        // The platform serializes the values before it looks at the transaction: an unclonable
        // value is its DataCloneError even on a rolled back or finished transaction.
        if (!this.#usable()) this.#target.serialize(call);
      },
    ) as Promise<void>;
  }

  /** Deletes one key (→ whether it existed) or several (→ how many existed). */
  delete(key: string, options?: PutOptions): Promise<boolean>;
  delete(keys: string[], options?: PutOptions): Promise<number>;
  delete(keyOrKeys: string | string[], options?: PutOptions): Promise<boolean | number> {
    // biome-ignore lint/complexity/noArguments: tells "no argument" from an explicit undefined without a rest array on the hot path
    if (arguments.length === 0) return Promise.reject(missingKeyError("delete", "DurableObjectTransaction"));
    let call: KeyCall<PutOptions> | undefined;
    return this.#run(
      "delete",
      () => this.#target.delete(call as KeyCall<PutOptions>),
      () => {
        call = convertDeleteCall(keyOrKeys, options, "DurableObjectTransaction");
      },
    ) as Promise<boolean | number>;
  }

  /** Always fails: deleteAll() cannot run inside a transaction. */
  deleteAll(_options?: PutOptions): Promise<void> {
    return Promise.reject(new Error("Cannot call deleteAll() within a transaction"));
  }

  /** The alarm as the transaction sees it. */
  getAlarm(options?: GetAlarmOptions): Promise<number | null> {
    return this.#run(
      "getAlarm",
      () => this.#target.getAlarm(),
      () => readOptions(options, GET_ALARM_OPTIONS, "getAlarm", "DurableObjectTransaction", 1),
    ) as Promise<number | null>;
  }

  /** Sets the alarm; rolled back with the transaction. */
  setAlarm(scheduledTime: number | Date, options?: SetAlarmOptions): Promise<void> {
    let ms = 0;
    let converted: SetAlarmOptions | undefined;
    return this.#run(
      "setAlarm",
      () => this.#target.setAlarm(ms, converted),
      () => {
        ms = toAlarmTime(scheduledTime, "DurableObjectTransaction");
        converted = readOptions(options, SET_ALARM_OPTIONS, "setAlarm", "DurableObjectTransaction", 2);
        checkAlarmTime(ms);
      },
    ) as Promise<void>;
  }

  /** Deletes the alarm; rolled back with the transaction. */
  deleteAlarm(options?: SetAlarmOptions): Promise<void> {
    let converted: SetAlarmOptions | undefined;
    return this.#run(
      "deleteAlarm",
      () => this.#target.deleteAlarm(converted),
      () => {
        converted = readOptions(options, SET_ALARM_OPTIONS, "deleteAlarm", "DurableObjectTransaction", 1);
      },
    ) as Promise<void>;
  }

  /** Rolls the transaction back. Idempotent; every later call on `txn` fails. */
  rollback(): void {
    if (this.#state === "rolledBack") return;
    if (this.#state === "committed") throw committedError("rollback");
    this.#target.rollback();
    this.#state = "rolledBack";
  }

  /** Whether an operation would reach storage (not rolled back, not finished, savepoint open). */
  #usable(): boolean {
    return this.#state === "active" && this.#target.alive();
  }

  /**
   * Runs an operation: arguments are checked first (the platform converts them before it looks at
   * the transaction), then the transaction's state. `bypass` lets an operation that needs no
   * storage (an empty list range) answer whatever the state.
   */
  #run(name: string, fn: () => unknown, validate?: () => unknown, bypass?: () => boolean): Promise<unknown> {
    try {
      validate?.();
      if (bypass?.()) return Promise.resolve(fn());
      if (this.#state === "rolledBack") throw new Error(`Cannot ${name}() on rolled back transaction`);
      if (this.#state === "committed") throw committedError(name);
      // A storage closed under the transaction (close() rolled it back) says so, not "orphaned".
      this.#target.assertUsable();
      if (!this.#target.alive()) throw new Error(ORPHANED_TRANSACTION_MESSAGE);
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(e);
    }
  }
}

function committedError(name: string): Error {
  return new Error(
    `Cannot call ${name}() on transaction that has already committed: did you move \`txn\` outside of the closure?`,
  );
}
