/**
 * `storage.kv`: the synchronous key-value API of SQLite-backed objects. It shares data, the write
 * buffer and the commit stream with the async API; it just never returns promises.
 */
import { ActorStoreError } from "../errors";
import { likePlatformPrototype } from "../util/platform-prototype";
import { argumentTypeError } from "./argument-types";
import { compileListOptions, listedKey, toKey } from "./keys";
import type { KvOperations } from "./kv-operations";
import { readOptions, SYNC_KV_LIST_OPTIONS } from "./option-dictionaries";
import type { SyncKvListOptions } from "./options";
import type { StorageCore } from "./storage-core";

const PAGE_SIZE = 256;

/**
 * The synchronous key-value API, type-compatible with the platform's `SyncKvStorage`.
 *
 * @example
 * ```ts
 * storage.kv.put("a", 1);
 * for (const [key, value] of storage.kv.list({ prefix: "a" })) console.log(key, value);
 * ```
 */
export class SyncKvStorage {
  static {
    likePlatformPrototype(this.prototype, "SyncKvStorage");
  }

  readonly #ops: KvOperations;
  readonly #core: StorageCore;
  readonly #enabled: boolean;
  #listGeneration = 0;

  /** @internal */
  constructor(ops: KvOperations, core: StorageCore, enabled: boolean) {
    this.#ops = ops;
    this.#core = core;
    this.#enabled = enabled;
  }

  /** The value of `key`, or `undefined`. */
  get<T = unknown>(key: string): T | undefined {
    // biome-ignore lint/complexity/noArguments: the platform refuses a missing key, not an explicit undefined
    if (arguments.length === 0) throw argumentTypeError("get", "SyncKvStorage", 1, "string");
    this.#check();
    return this.#ops.getOne(key, false) as T | undefined;
  }

  /** Stores `value` (even `undefined`, as the platform's synchronous API does). */
  put<T>(key: string, value: T): void {
    // biome-ignore lint/complexity/noArguments: the platform refuses missing arguments, not an explicit undefined
    const given = arguments.length;
    if (given === 0) throw argumentTypeError("put", "SyncKvStorage", 1, "string");
    if (given === 1) {
      toKey(key); // parameter 1 converts first: a Symbol fails with its own error
      throw argumentTypeError("put", "SyncKvStorage", 2, "JsValue");
    }
    this.#check();
    this.#ops.putAnything(key, value);
  }

  /** Deletes `key`; whether it existed. */
  delete(key: string): boolean {
    // biome-ignore lint/complexity/noArguments: the platform refuses a missing key, not an explicit undefined
    if (arguments.length === 0) throw argumentTypeError("delete", "SyncKvStorage", 1, "string");
    this.#check();
    return this.#ops.deleteOne(key, false);
  }

  /**
   * Iterates entries in UTF-8 key order, page by page. Only one iterator may be live: starting
   * another invalidates this one, as on the platform.
   */
  list<T = unknown>(options?: SyncKvListOptions): IterableIterator<[string, T]> {
    const converted = readOptions(options, SYNC_KV_LIST_OPTIONS, "list", "SyncKvStorage", 1);
    this.#check();
    const range = compileListOptions(converted);
    const generation = ++this.#listGeneration;
    const ops = this.#ops;
    let remaining = range.limit;
    let start = range.start;
    let end = range.end;
    let page: Array<[string, Uint8Array]> = [];
    let index = 0;
    let exhausted = range.empty;
    const self = this;
    const fetch = () => {
      const limit = remaining === undefined ? PAGE_SIZE : Math.min(PAGE_SIZE, remaining);
      page = range.empty
        ? []
        : ops.listEntries({ start, ...(end === undefined ? {} : { end }), reverse: range.reverse, limit });
      index = 0;
      if (page.length < limit) exhausted = true;
      const last = page[page.length - 1];
      if (last !== undefined) {
        // Continue after the last key seen, in the direction of travel.
        if (range.reverse) end = last[0];
        else start = `${last[0]}\u0000`;
      }
    };
    const iterator: IterableIterator<[string, T]> = {
      next(): IteratorResult<[string, T]> {
        if (generation !== self.#listGeneration) {
          throw new Error(
            "kv.list() iterator was invalidated because a new call to kv.list() was started. Only one kv.list() iterator can exist at a time.",
          );
        }
        if (index >= page.length) {
          if (exhausted || remaining === 0) return { done: true, value: undefined };
          fetch();
          if (page.length === 0) return { done: true, value: undefined };
        }
        const entry = page[index++] as [string, Uint8Array];
        if (remaining !== undefined) remaining--;
        // Each stored key, as the platform reads it back (an iterator, unlike a Map, repeats a key).
        return { done: false, value: [listedKey(entry[0]), ops.decode(entry[1]) as T] };
      },
      [Symbol.iterator]() {
        return iterator;
      },
    };
    return iterator;
  }

  #check(): void {
    if (!this.#enabled) {
      throw new ActorStoreError(
        "ERR_BACKEND_UNSUPPORTED",
        'The storage.kv (synchronous KV) API is only available on the SQLite backend. Open the storage with ObjectStorage.open({ backend: "sqlite" }).',
      );
    }
    this.#core.assertUsable();
  }
}
