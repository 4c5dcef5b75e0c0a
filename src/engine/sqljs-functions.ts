/**
 * One of the sql.js adapter's workarounds (sqljs.ts lists them all and checks them at load):
 * functions without a WASM module each. sql.js's `create_function` compiles a new WASM module per
 * registration; every function of every connection runs through one shared trampoline instead.
 */
import type { EngineFunction, EngineValue } from "./engine";
import type { WasmHeap } from "./sqljs-heap";
import { type RawSqlite, SQLITE_STATIC, SQLITE_TRANSIENT } from "./sqljs-statement";

/** How a function registered through `SqlJsModule.registerFunction` (sqljs.ts) computes its result. */
export type RawFunction =
  /** A JS function of SQL values (NULL, number, text, blob) returning one (see `EngineFunction`). */
  | { kind: "values"; fn: EngineFunction }
  /** A 0-argument function returning an INTEGER (sql.js would return every number as REAL). */
  | { kind: "int64"; fn: () => bigint }
  /** `randomblob(N)`: the bytes, or `undefined` to make SQLite fail with `string or blob too big`. */
  | { kind: "blob"; fn: (length: number) => Uint8Array | undefined };

const SQLITE_UTF8 = 1;
/** `SQLITE_DIRECTONLY`: the function may not be called from the schema (views, triggers…). */
const SQLITE_DIRECTONLY = 0x80000;
const SQLITE_INTEGER = 1;
const SQLITE_FLOAT = 2;
const SQLITE_TEXT = 3;
const SQLITE_BLOB = 4;

/**
 * Every function of every connection runs through one WASM function pointer (sql.js's
 * `create_function` compiles a WASM module per call: a tenth of a millisecond per function, on
 * every open). Each registration's user data is an id that selects its implementation.
 */
export class SharedFunctions {
  readonly #raw: RawSqlite;
  readonly #heap: WasmHeap;
  readonly #pointer: number;
  readonly #byId = new Map<number, RawFunction>();
  readonly #idsByDb = new Map<number, number[]>();
  #nextId = 1;
  /** See {@link locateUserData}; set once it is known. */
  userDataAt: readonly [number, number] = [-1, -1];
  /** While {@link locateUserData} runs: gets each call's context instead. */
  onProbe: ((context: number) => void) | undefined;

  /** The longest string or blob SQLite accepts (`SQLITE_LIMIT_LENGTH`), for `randomblob`. */
  readonly #maxLength: number;

  constructor(raw: RawSqlite, heap: WasmHeap, maxLength: number) {
    this.#raw = raw;
    this.#heap = heap;
    this.#maxLength = maxLength;
    this.#pointer = raw.addFunction((context, argc, argv) => this.#call(context, argc, argv), "viii");
  }

  registerRaw(dbPtr: number, name: string, arity: number, userData: number, directOnly = false): void {
    const namePtr = this.#raw.stringToNewUTF8(name);
    try {
      const rc = this.#raw._sqlite3_create_function_v2(
        dbPtr,
        namePtr,
        arity,
        directOnly ? SQLITE_UTF8 | SQLITE_DIRECTONLY : SQLITE_UTF8,
        userData,
        this.#pointer,
        0,
        0,
        0,
      );
      if (rc !== 0) throw new Error(`could not register the SQL function ${name} (SQLite result ${rc})`);
    } finally {
      this.#raw._free(namePtr);
    }
  }

  register(dbPtr: number, name: string, arity: number, impl: RawFunction, directOnly = false): void {
    const id = this.#nextId++;
    this.#byId.set(id, impl);
    let ids = this.#idsByDb.get(dbPtr);
    if (ids === undefined) this.#idsByDb.set(dbPtr, (ids = []));
    ids.push(id);
    this.registerRaw(dbPtr, name, arity, id, directOnly);
  }

  forget(dbPtr: number): void {
    for (const id of this.#idsByDb.get(dbPtr) ?? []) this.#byId.delete(id);
    this.#idsByDb.delete(dbPtr);
  }

  #call(context: number, argc: number, argv: number): void {
    if (this.onProbe !== undefined) {
      this.onProbe(context);
      return;
    }
    const heap = this.#heap;
    const raw = this.#raw;
    const [a, b] = this.userDataAt;
    const impl = this.#byId.get(heap.u32(heap.u32(context + a) + b));
    try {
      if (impl === undefined) throw new Error("a function of a closed database was called");
      switch (impl.kind) {
        case "int64":
          raw._sqlite3_result_int64(context, impl.fn());
          return;
        case "blob": {
          // randomblob(N) returns max(N, 1) bytes, and refuses more than SQLITE_LIMIT_LENGTH before
          // allocating anything: a result longer than the limit makes SQLite report `string or
          // blob too big` (SQLITE_TOOBIG) without reading it.
          const requested = Math.trunc(raw._sqlite3_value_double(heap.u32(argv)));
          const n = Math.max(1, requested || 1);
          const bytes = n > this.#maxLength ? undefined : impl.fn(n);
          if (bytes === undefined) raw._sqlite3_result_blob(context, argv, this.#maxLength + 1, SQLITE_STATIC);
          else this.#resultBlob(context, bytes);
          return;
        }
        case "values": {
          const args: EngineValue[] = [];
          for (let i = 0; i < argc; i++) args.push(this.#value(heap.u32(argv + 4 * i)));
          this.#result(context, impl.fn(...args));
          return;
        }
      }
    } catch (error) {
      const message = raw.stringToNewUTF8(error instanceof Error ? error.message : String(error));
      raw._sqlite3_result_error(context, message, -1);
      raw._free(message);
    }
  }

  #value(value: number): EngineValue {
    const raw = this.#raw;
    switch (raw._sqlite3_value_type(value)) {
      case SQLITE_INTEGER:
      case SQLITE_FLOAT:
        return raw._sqlite3_value_double(value);
      case SQLITE_TEXT:
        return raw.UTF8ToString(raw._sqlite3_value_text(value), raw._sqlite3_value_bytes(value), true);
      case SQLITE_BLOB: {
        const ptr = raw._sqlite3_value_blob(value);
        return this.#heap.copy(ptr, raw._sqlite3_value_bytes(value)).slice();
      }
      default:
        return null;
    }
  }

  #result(context: number, value: EngineValue): void {
    const raw = this.#raw;
    if (value === null || value === undefined) raw._sqlite3_result_null(context);
    else if (typeof value === "number") raw._sqlite3_result_double(context, value);
    else if (typeof value === "string") {
      const text = raw.stringToNewUTF8(value);
      raw._sqlite3_result_text(context, text, raw.lengthBytesUTF8(value), SQLITE_TRANSIENT);
      raw._free(text);
    } else this.#resultBlob(context, value);
  }

  #resultBlob(context: number, bytes: Uint8Array): void {
    const raw = this.#raw;
    const copy = raw._malloc(Math.max(1, bytes.byteLength));
    if (copy === 0) throw new Error("out of memory");
    raw.writeArrayToMemory(bytes, copy);
    raw._sqlite3_result_blob(context, copy, bytes.byteLength, SQLITE_TRANSIENT);
    raw._free(copy);
  }
}
