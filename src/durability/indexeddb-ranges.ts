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

/**
 * The row stored under `keys[i]`, read a page of up to `pageSize` keys at a time (`read(from, to)`
 * returns the rows of one range, in key order) and keeping only the current page: for walking a
 * long log in order without holding it all. @internal
 */
export function pagedRows(
  keys: readonly IDBValidKey[],
  pageSize: number,
  read: (from: IDBValidKey, to: IDBValidKey) => Promise<unknown[]>,
): (i: number) => Promise<unknown> {
  let page: unknown[] = [];
  let pageStart = 0;
  return async (i) => {
    if (i >= pageStart + page.length || i < pageStart) {
      pageStart = i;
      page = await read(keys[i] as IDBValidKey, keys[Math.min(keys.length, i + pageSize) - 1] as IDBValidKey);
    }
    return page[i - pageStart];
  };
}
