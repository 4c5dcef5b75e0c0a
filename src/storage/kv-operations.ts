/**
 * The key-value operations shared by `ObjectStorage`, its transactions and the synchronous `kv`
 * API: argument conversion and validation in the platform's order, then the core.
 * Everything here is synchronous; the async API wraps it so that errors become rejections.
 */
import type { StorageLimits } from "../limits";
import type { PutCall } from "./call-arguments";
import { checkKeyCount, checkKeySize, compareKeys, compileListOptions, listedKey, toKey } from "./keys";
import type { ListOptions } from "./options";
import type { StorageCore } from "./storage-core";
import { type Codecs, checkEncodedValue, decodeValue, decodeValueRange, encodeValue, isPrimitive } from "./value-io";

/** What {@link KvOperations.getMany} reads for a key with no entry (a stored value can be `undefined`). */
const MISSING: unique symbol = Symbol("missing");

/**
 * Each key of a list, converted ({@link toKey}) by index: a hole converts as the `undefined` it
 * reads as (`Array.prototype.map` would skip it and leave the hole).
 */
function toKeys(rawKeys: readonly unknown[]): string[] {
  const keys = new Array<string>(rawKeys.length);
  for (let i = 0; i < rawKeys.length; i++) keys[i] = toKey(rawKeys[i]);
  return keys;
}

/** Key-value operations over one core. */
export class KvOperations {
  readonly #core: StorageCore;
  readonly #codecs: Codecs;
  readonly #limits: StorageLimits;

  constructor(core: StorageCore, codecs: Codecs, limits: StorageLimits) {
    this.#core = core;
    this.#codecs = codecs;
    this.#limits = limits;
  }

  /** get(key) */
  getOne(rawKey: unknown, noCache: boolean): unknown {
    const key = toKey(rawKey);
    checkKeySize(key, this.#limits);
    this.#core.assertUsable();
    return this.#value(key, noCache);
  }

  /**
   * get(keys[]): a Map in key order, missing keys omitted, duplicates collapsed; each key as the
   * platform reads it back ({@link listedKey}), so keys that read back alike collapse too (the
   * last in key order wins, as there).
   */
  getMany(rawKeys: readonly unknown[], noCache: boolean): Map<string, unknown> {
    checkKeyCount(rawKeys.length, this.#limits);
    const keys = toKeys(rawKeys);
    for (const k of keys) checkKeySize(k, this.#limits);
    this.#core.assertUsable();
    const unique = [...new Set(keys)].sort(compareKeys);
    const out = new Map<string, unknown>();
    for (const k of unique) {
      // A stored `undefined` (the synchronous kv API writes one) is an entry, as on the platform.
      const v = this.#value(k, noCache, MISSING);
      if (v !== MISSING) out.set(listedKey(k), v);
    }
    return out;
  }

  /** The value stored at `key`, or `missing` when there is none. */
  #value(key: string, noCache: boolean, missing?: typeof MISSING): unknown {
    const primitive = this.#core.cachedPrimitive(key);
    if (primitive !== undefined) return primitive.value;
    const bytes = this.#core.read(key, noCache);
    if (bytes === null) return missing;
    const value = decodeValue(bytes, this.#codecs);
    if (!noCache && isPrimitive(value)) this.#core.rememberPrimitive(key, bytes, value);
    return value;
  }

  /**
   * put(key, value), checked in the platform's order: the key converts first, then the value must
   * be defined and serializable, then the key's size, then the value's.
   */
  putOne(rawKey: unknown, value: unknown, allowUnconfirmed: boolean, noCache = false): void {
    const key = toKey(rawKey);
    if (value === undefined) throw new TypeError("put() called with undefined value.");
    const bytes = encodeValue(value, key, this.#codecs, this.#limits);
    this.#core.write(key, bytes, allowUnconfirmed, noCache);
  }

  /** Stores `undefined` as a value (the synchronous kv API accepts it). */
  putAnything(rawKey: unknown, value: unknown): void {
    const key = toKey(rawKey);
    const bytes = encodeValue(value, key, this.#codecs, this.#limits);
    this.#core.write(key, bytes, false);
  }

  /** put(entries), the entries converted ({@link PutCall}): all validated before any is written, so a bad entry writes nothing. */
  putMany(defined: ReadonlyArray<readonly [string, unknown]>, allowUnconfirmed: boolean, noCache = false): void {
    const pairs: Array<[string, Uint8Array]> = [];
    // The platform serializes every value before it checks any limit: an unclonable value is
    // reported before too many pairs, an over-long key or an oversized value elsewhere in the call.
    const encoded = defined.map(([, value]) => this.#codecs.write.encode(value));
    checkKeyCount(defined.length, this.#limits);
    for (let i = 0; i < defined.length; i++) {
      const [k, value] = defined[i] as readonly [string, unknown];
      const bytes = encoded[i] as Uint8Array;
      checkEncodedValue(value, bytes, k, this.#codecs, this.#limits);
      pairs.push([toKey(k), bytes]); // keys from Object.keys can hold lone surrogates too
    }
    this.#core.assertUsable();
    for (const [k, bytes] of pairs) this.#core.write(k, bytes, allowUnconfirmed, noCache);
  }

  /**
   * Serializes what a put() call would write and discards it: the platform serializes a put's
   * values before it looks at the transaction, so an unclonable value is reported (DataCloneError)
   * even on a transaction that can no longer write.
   */
  serializeOnly(call: PutCall): void {
    if ("entries" in call) for (const [, v] of call.entries) this.#codecs.write.encode(v);
    else this.#codecs.write.encode(call.value);
  }

  /** delete(key) → whether it existed. */
  deleteOne(rawKey: unknown, allowUnconfirmed: boolean): boolean {
    const key = toKey(rawKey);
    checkKeySize(key, this.#limits);
    this.#core.assertUsable();
    return this.#core.delete(key, allowUnconfirmed);
  }

  /**
   * delete(keys[]) → how many existed. Each key is deleted in the order given, as the platform runs
   * one statement per key (which `changes()` and `total_changes()` show); a repeated key existed
   * only the first time.
   */
  deleteMany(rawKeys: readonly unknown[], allowUnconfirmed: boolean): number {
    checkKeyCount(rawKeys.length, this.#limits);
    const keys = toKeys(rawKeys);
    for (const k of keys) checkKeySize(k, this.#limits);
    this.#core.assertUsable();
    let count = 0;
    for (const k of keys) if (this.#core.delete(k, allowUnconfirmed)) count++;
    return count;
  }

  /** list(options) as raw entries (values decoded lazily by the caller). */
  listEntries(options: ListOptions | undefined): Array<[string, Uint8Array]> {
    const range = compileListOptions(options);
    this.#core.assertUsable();
    return this.#core.list(range, Boolean(options?.noCache));
  }

  /** list(options) → Map in order, every value decoded (a value that cannot be decoded fails the call). */
  list(options: ListOptions | undefined): Map<string, unknown> {
    const range = compileListOptions(options);
    this.#core.assertUsable();
    return this.#core.listValues(range, Boolean(options?.noCache), this.#decode);
  }

  readonly #decode = (bytes: Uint8Array, start: number, end: number): unknown =>
    decodeValueRange(bytes, start, end, this.#codecs);

  /** Decodes stored bytes. */
  decode(bytes: Uint8Array): unknown {
    return decodeValue(bytes, this.#codecs);
  }
}
