/**
 * The key ranges the IndexedDB adapter (indexeddb-persistence.ts) reads and deletes with: its
 * stores are keyed by seq, and every range goes through the `IDBKeyRange` it was given (the
 * global one, or one that goes with another IndexedDB implementation).
 */

/** The `IDBKeyRange` class that goes with an `IndexedDbFactoryLike` (its static methods). */
export interface IndexedDbKeyRangeLike {
  bound(lower: unknown, upper: unknown, lowerOpen?: boolean, upperOpen?: boolean): unknown;
  upperBound(upper: unknown, open?: boolean): unknown;
}

/** Ranges of seq keys, made by one `IDBKeyRange` implementation. @internal */
export class SeqRanges {
  readonly #range: typeof IDBKeyRange;

  constructor(range: IndexedDbKeyRangeLike) {
    this.#range = range as typeof IDBKeyRange;
  }

  /** The keys from `from` to `to`, both included. */
  between(from: IDBValidKey, to: IDBValidKey): IDBKeyRange {
    return this.#range.bound(from, to);
  }

  /** The keys from the first of `keys` to the last (`keys` in order, not empty), both included. */
  spanning(keys: readonly IDBValidKey[]): IDBKeyRange {
    return this.#range.bound(keys[0] as IDBValidKey, keys.at(-1) as IDBValidKey);
  }

  /** Every key up to `seq`, included. */
  through(seq: number): IDBKeyRange {
    return this.#range.upperBound(seq);
  }
}
