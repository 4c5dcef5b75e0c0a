/**
 * What a cluster host does when the members change, sized for hosts with many objects:
 *
 * - the objects it no longer owns are evicted a bounded number at a time ({@link HAND_OVER_WIDTH}),
 *   not one after the other (a drain of 10,000 objects waited for each close in turn) and not all at
 *   once (each close may flush to the store);
 * - the alarm index is read only when the change can have given this host objects: rendezvous
 *   hashing moves objects only away from a member that is gone, so a change that only added
 *   members gives the others nothing new to wake ({@link gainsObjects});
 * - the objects it lost to a newer holder ({@link LostObjects}) are remembered only while that can
 *   matter, so that set no longer grows for the life of the process.
 */
import type { Clock } from "../util/clock";

/** How many objects a host evicts at once when it hands them over. @internal */
export const HAND_OVER_WIDTH = 16;

/** Runs `work` on every item, at most `width` at a time; resolves when all have settled. @internal */
export async function eachBounded<T>(items: readonly T[], width: number, work: (item: T) => Promise<unknown>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item).catch(() => {});
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

/**
 * Whether a change of the live members from `before` to `after` can have made this host the owner
 * of objects it did not own: when a member is gone (each of its objects moves to the member that
 * ranked next for it), or on the first view (`before` undefined: everything is new). A change that
 * only added members moves objects only to the new ones. @internal
 */
export function gainsObjects(before: readonly string[] | undefined, after: readonly string[]): boolean {
  if (before === undefined) return true;
  const now = new Set(after);
  return before.some((member) => !now.has(member));
}

/**
 * The objects a host lost to a newer holder (it was fenced): while it owns one by the hash, its
 * events go to the holder the bucket names, until that holder says it no longer holds it.
 *
 * An entry used to be dropped only when an event for the object found its holder without it, so
 * the set grew by every object lost and not used again, for the life of the process. But a holder
 * hands an object back within a heartbeat of seeing this host again: an entry older than `keepMs`
 * (ten times the members' ttl) no longer protects anything, and is dropped. The next event then
 * starts the object here; a holder that still had it (its view of the members stayed different all
 * that time) is fenced, as by any other start, and never writes again. @internal
 */
export class LostObjects {
  readonly #clock: Clock;
  readonly #keepMs: number;
  /** When each was lost, oldest first (a re-loss moves it to the end). */
  readonly #since = new Map<string, number>();

  constructor(clock: Clock, keepMs: number) {
    this.#clock = clock;
    this.#keepMs = keepMs;
  }

  /** How many objects are remembered (after dropping the ones older than `keepMs`). */
  get size(): number {
    this.#expire();
    return this.#since.size;
  }

  add(key: string): void {
    this.#since.delete(key);
    this.#since.set(key, this.#clock.now());
    this.#expire();
  }

  has(key: string): boolean {
    this.#expire();
    return this.#since.has(key);
  }

  delete(key: string): void {
    this.#since.delete(key);
  }

  /** Drops the entries older than `keepMs` (also done by every `add` and `has`). */
  prune(): void {
    this.#expire();
  }

  #expire(): void {
    const oldest = this.#clock.now() - this.#keepMs;
    for (const [key, at] of this.#since) {
      if (at > oldest) return;
      this.#since.delete(key);
    }
  }
}
