/**
 * Where the API service keeps its records: one {@link ObjectStorage} per record (the directory
 * index, each account, each zone, the user), in memory by default or in a directory (one
 * subdirectory per object) so a restart keeps everything.
 *
 * A record is stored as JSON text cut into chunks well under the per-value limit, written in one
 * transaction, so a record of any size is replaced whole or not at all.
 */
import { ActorStoreError } from "../errors";
import { ObjectStorage } from "../storage/object-storage";
import type { Clock } from "../util/clock";

/** Characters per stored chunk: at most 3 bytes each in UTF-8, so a chunk stays under 128 KiB. */
const CHUNK_CHARS = 30_000;
/** Keys per put or get call (the storage limit). */
const KEYS_PER_CALL = 128;
const COUNT_KEY = "record:chunks";

function chunkKey(i: number): string {
  return `record:${String(i).padStart(8, "0")}`;
}

/** Options of {@link RecordStore}. */
export interface RecordStoreOptions {
  /** Keep every object in this directory; in memory when absent. */
  readonly directory?: string;
  readonly clock?: Clock;
}

/**
 * Refuses a directory that is an object's directory or a host's root with `ERR_DIRECTORY`, before
 * anything is written in it.
 */
async function checkDirectory(directory: string): Promise<void> {
  const { stateDirectoryRefusal } = await import("./state-directory");
  const refusal = await stateDirectoryRefusal(directory, `The API state directory ${JSON.stringify(directory)}`);
  if (refusal !== undefined) throw new ActorStoreError("ERR_DIRECTORY", refusal);
}

/** Loads and saves whole records by name, one storage object per name. */
export class RecordStore {
  readonly #directory: string | undefined;
  readonly #clock: Clock | undefined;
  readonly #open = new Map<string, Promise<ObjectStorage>>();
  /** The check of the directory, made before the first object is opened in it. */
  #directoryChecked: Promise<void> | undefined;
  #closed = false;

  constructor(options: RecordStoreOptions = {}) {
    this.#directory = options.directory;
    this.#clock = options.clock;
  }

  async #storage(name: string): Promise<ObjectStorage> {
    if (this.#closed) throw new Error("The API handler is closed; create a new one.");
    let storage = this.#open.get(name);
    if (storage === undefined) {
      const directory = this.#directory;
      storage = (async () => {
        const base = this.#clock === undefined ? {} : { clock: this.#clock };
        if (directory === undefined) return ObjectStorage.open({ ...base, backend: "kv" });
        this.#directoryChecked ??= checkDirectory(directory);
        await this.#directoryChecked;
        const path = await import("node:path");
        return ObjectStorage.open({ ...base, backend: "kv", directory: path.join(directory, name) });
      })();
      this.#open.set(name, storage);
      // A failed open is not cached: the next request tries again.
      storage.catch(() => this.#open.delete(name));
    }
    return storage;
  }

  /** The record stored under `name`, or `undefined` when there is none. */
  async load(name: string): Promise<unknown> {
    const storage = await this.#storage(name);
    const count = await storage.get(COUNT_KEY);
    if (typeof count !== "number") return undefined;
    let text = "";
    for (let start = 0; start < count; start += KEYS_PER_CALL) {
      const keys = Array.from({ length: Math.min(KEYS_PER_CALL, count - start) }, (_, i) => chunkKey(start + i));
      const got = (await storage.get(keys)) as Map<string, unknown>;
      for (const key of keys) {
        const chunk = got.get(key);
        if (typeof chunk !== "string") throw new Error(`Record ${name} is incomplete: chunk ${key} is missing.`);
        text += chunk;
      }
    }
    return JSON.parse(text) as unknown;
  }

  /** Replaces the record stored under `name`, all of it or nothing. */
  async save(name: string, value: unknown): Promise<void> {
    const text = JSON.stringify(value);
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += CHUNK_CHARS) chunks.push(text.slice(i, i + CHUNK_CHARS));
    const storage = await this.#storage(name);
    await storage.transaction(async (txn) => {
      const before = await txn.get(COUNT_KEY);
      for (let start = 0; start < chunks.length; start += KEYS_PER_CALL) {
        const entries: Record<string, string> = {};
        chunks.slice(start, start + KEYS_PER_CALL).forEach((c, i) => {
          entries[chunkKey(start + i)] = c;
        });
        await txn.put(entries);
      }
      const stale: string[] = [];
      for (let i = chunks.length; i < (typeof before === "number" ? before : 0); i++) stale.push(chunkKey(i));
      for (let start = 0; start < stale.length; start += KEYS_PER_CALL) {
        await txn.delete(stale.slice(start, start + KEYS_PER_CALL));
      }
      await txn.put(COUNT_KEY, chunks.length);
    });
  }

  /** Closes every storage object (their writes are confirmed first). */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#open.values()];
    this.#open.clear();
    await Promise.all(
      all.map(async (s) => {
        try {
          await (await s).close();
        } catch {
          // An object that failed to open has nothing to close.
        }
      }),
    );
  }
}
