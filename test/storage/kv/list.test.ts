import { afterEach, describe, expect, it } from "vitest";
import type { ObjectStorage } from "../../../src/storage/object-storage";
import type { ListOptions } from "../../../src/storage/options";
import { BACKENDS, keysOf, openStorage } from "./harness";
import { macrotask, PLATFORM_ORDER } from "./helpers";

const KEYS = ["a", "ab", "abc", "b", "c", "d"];
const LIMIT_POSITIVE = new TypeError("List limit must be positive.");
const LIMIT_RANGE = new TypeError("Value out of range. Must be between -2147483648 and 2147483647 (inclusive).");
const START_AND_AFTER = new TypeError("list() cannot be called with both start and startAfter values.");

/** [options, expected keys] over {@link KEYS}. Worked out by hand from the platform's rules. */
const CASES: Array<[ListOptions, string[]]> = [
  [{}, KEYS],
  [{ start: "ab" }, ["ab", "abc", "b", "c", "d"]],
  [{ start: "aa" }, ["ab", "abc", "b", "c", "d"]],
  [{ startAfter: "ab" }, ["abc", "b", "c", "d"]],
  [{ startAfter: "aa" }, ["ab", "abc", "b", "c", "d"]],
  [{ end: "c" }, ["a", "ab", "abc", "b"]],
  [{ end: "bb" }, ["a", "ab", "abc", "b"]],
  [{ start: "ab", end: "c" }, ["ab", "abc", "b"]],
  [{ startAfter: "ab", end: "c" }, ["abc", "b"]],
  [{ prefix: "a" }, ["a", "ab", "abc"]],
  [{ prefix: "ab" }, ["ab", "abc"]],
  [{ prefix: "abcd" }, []],
  [{ prefix: "z" }, []],
  [{ prefix: "" }, KEYS],
  [{ reverse: true }, [...KEYS].reverse()],
  [{ limit: 2 }, ["a", "ab"]],
  [{ limit: 6 }, KEYS],
  [{ limit: 100 }, KEYS],
  [{ reverse: true, limit: 2 }, ["d", "c"]],
  [{ start: "ab", end: "c", reverse: true }, ["b", "abc", "ab"]],
  [{ start: "ab", end: "c", reverse: true, limit: 2 }, ["b", "abc"]],
  [{ start: "ab", end: "c", limit: 2 }, ["ab", "abc"]],
  [{ startAfter: "a", end: "c", reverse: true, limit: 1 }, ["b"]],
  [{ prefix: "a", reverse: true }, ["abc", "ab", "a"]],
  [{ prefix: "a", reverse: true, limit: 2 }, ["abc", "ab"]],
  [{ prefix: "a", start: "ab" }, ["ab", "abc"]],
  [{ prefix: "a", startAfter: "ab" }, ["abc"]],
  [{ prefix: "a", end: "abc" }, ["a", "ab"]],
  [{ prefix: "a", start: "0" }, ["a", "ab", "abc"]],
  [{ prefix: "a", end: "z" }, ["a", "ab", "abc"]],
  [{ prefix: "ab", start: "b" }, []],
  [{ prefix: "b", end: "b" }, []],
  [{ prefix: "b", end: "a" }, []],
  [{ start: "c", end: "b" }, []],
  [{ start: "b", end: "b" }, []],
  [{ start: "c", end: "b", reverse: true, limit: 1 }, []],
  [{ startAfter: "d" }, []],
  [{ start: "", end: "" }, []],
  [{ end: "a" }, []],
  [{ end: "a\u0000" }, ["a"]],
  [{ limit: 1.7 }, ["a"]],
  [{ limit: "2" as unknown as number }, ["a", "ab"]],
  [{ limit: 2147483647 }, KEYS],
];

describe.each(BACKENDS)("list (%s backend)", (backend) => {
  let storage: ObjectStorage;
  afterEach(async () => {
    await storage?.close();
  });

  async function seeded(): Promise<ObjectStorage> {
    storage = await openStorage({ backend });
    await storage.put(Object.fromEntries(KEYS.map((k) => [k, k.toUpperCase()])));
    return storage;
  }

  it.each(CASES)("list: %j", async (options, expected) => {
    await seeded();
    const got = await storage.list(options);
    expect(keysOf(got)).toEqual(expected);
    for (const [k, v] of got) expect(v).toBe(k.toUpperCase());
  });

  it.each(CASES)("list: %j over writes not yet flushed gives the same answer", async (options, expected) => {
    storage = await openStorage({ backend });
    // Half the keys committed, the rest buffered, plus buffered noise that is deleted again.
    await storage.put(Object.fromEntries(KEYS.filter((_, i) => i % 2 === 0).map((k) => [k, k.toUpperCase()])));
    await macrotask();
    await storage.put({ zz: 1, "ab\u0000": 1, "0": 1 });
    await macrotask();
    void storage.put(Object.fromEntries(KEYS.filter((_, i) => i % 2 === 1).map((k) => [k, k.toUpperCase()])));
    void storage.delete(["zz", "ab\u0000", "0"]);
    expect(keysOf(await storage.list(options))).toEqual(expected);
  });

  it("list: rejects start together with startAfter", async () => {
    await seeded();
    await expect(storage.list({ start: "a", startAfter: "b" })).rejects.toThrow(START_AND_AFTER);
    await expect(storage.list({ start: "a", startAfter: "b", limit: 0 })).rejects.toThrow(START_AND_AFTER);
  });

  it("list: rejects a limit that is not positive, even for an empty range", async () => {
    await seeded();
    for (const limit of [0, -1, 0.9, Number.POSITIVE_INFINITY, Number.NaN]) {
      const p = storage.list({ limit });
      await expect(p, String(limit)).rejects.toThrow(LIMIT_POSITIVE);
      await expect(p).rejects.toBeInstanceOf(TypeError);
    }
    await expect(storage.list({ start: "c", end: "b", limit: 0 })).rejects.toThrow(LIMIT_POSITIVE);
  });

  it("list: rejects a limit outside int32", async () => {
    await seeded();
    await expect(storage.list({ limit: 2 ** 31 })).rejects.toThrow(LIMIT_RANGE);
    await expect(storage.list({ limit: 2 ** 31 })).rejects.toBeInstanceOf(TypeError);
    // The range is checked before the fraction is dropped, as on the platform.
    await expect(storage.list({ limit: 2 ** 31 - 0.5 })).rejects.toThrow(LIMIT_RANGE);
    await expect(storage.list({ limit: -(2 ** 31) - 0.5 })).rejects.toThrow(LIMIT_RANGE);
    expect((await storage.list({ limit: 2 ** 31 - 1 })).size).toBeGreaterThan(0);
  });

  it("list: a BigInt limit is refused as the platform's number conversion refuses it", async () => {
    await seeded();
    const p = storage.list({ limit: 1n as unknown as number });
    await expect(p).rejects.toThrow(new TypeError("Cannot convert a BigInt value to a number"));
    await expect(p).rejects.toBeInstanceOf(TypeError);
  });

  it("list: returns a key equal to startAfter + NUL (the platform's quirk)", async () => {
    storage = await openStorage({ backend });
    await storage.put({ a: 1, "a\u0000": 2, "a\u0000b": 3, ab: 4 });
    expect(keysOf(await storage.list({ startAfter: "a" }))).toEqual(["a\u0000", "a\u0000b", "ab"]);
    expect(keysOf(await storage.list({ startAfter: "a\u0000" }))).toEqual(["a\u0000b", "ab"]);
  });

  it("list: orders keys by UTF-8 bytes, forwards and in reverse", async () => {
    storage = await openStorage({ backend });
    for (const k of [...PLATFORM_ORDER].reverse()) await storage.put(k, 1);
    expect(keysOf(await storage.list())).toEqual(PLATFORM_ORDER);
    expect(keysOf(await storage.list({ reverse: true }))).toEqual([...PLATFORM_ORDER].reverse());
    expect(keysOf(await storage.list({ start: "\uFFFF" }))).toEqual(["\uFFFF", "😀"]);
    expect(keysOf(await storage.list({ end: "😀" }))).toContain("\uFFFF");
    expect(keysOf(await storage.list({ prefix: "\uFFFF" }))).toEqual(["\uFFFF"]);
  });

  it("list: also orders buffered (unflushed) keys by UTF-8 bytes", async () => {
    storage = await openStorage({ backend });
    for (const k of [...PLATFORM_ORDER].reverse()) void storage.put(k, 1);
    expect(keysOf(await storage.list())).toEqual(PLATFORM_ORDER);
    expect(keysOf(await storage.list({ reverse: true, limit: 3 }))).toEqual(["😀", "\uFFFF", "é"]);
  });

  it("list: returns a key that starts with U+FEFF (a byte-order mark) as it was put, read from SQLite or not", async () => {
    storage = await openStorage({ backend });
    const keys = ["\uFEFF", "\uFEFFa", `\uFEFF${"k".repeat(40)}`, "\uFEFFé"];
    await storage.put(Object.fromEntries(keys.map((k, i) => [k, i])));
    await storage.sync();
    const sorted = [...keys].sort();
    expect(keysOf(await storage.list())).toEqual(sorted);
    expect(keysOf(await storage.list({ noCache: true }))).toEqual(sorted);
    expect(keysOf(await storage.list({ prefix: "\uFEFF", reverse: true }))).toEqual([...sorted].reverse());
    for (const [i, k] of keys.entries()) expect(await storage.get(k, { noCache: true })).toBe(i);
  });

  it("list: prefix with multi-byte and NUL characters", async () => {
    storage = await openStorage({ backend });
    await storage.put({ é: 1, éa: 2, ê: 3, "e\u0301": 4, "e\u0301x": 5, e: 6, "a\u0000": 7, "a\u0000\u0000": 8, a: 9 });
    expect(keysOf(await storage.list({ prefix: "é" }))).toEqual(["é", "éa"]);
    expect(keysOf(await storage.list({ prefix: "e\u0301" }))).toEqual(["e\u0301", "e\u0301x"]);
    expect(keysOf(await storage.list({ prefix: "a\u0000" }))).toEqual(["a\u0000", "a\u0000\u0000"]);
  });

  it("list: returns more than 128 entries (no per-call key limit on list)", async () => {
    storage = await openStorage({ backend });
    for (let i = 0; i < 300; i += 100) {
      await storage.put(
        Object.fromEntries(Array.from({ length: 100 }, (_, j) => [`k${String(i + j).padStart(3, "0")}`, j])),
      );
    }
    expect((await storage.list()).size).toBe(300);
    expect((await storage.list({ limit: 129 })).size).toBe(129);
  });

  it("list: does not mutate its options", async () => {
    await seeded();
    const options: ListOptions = { startAfter: "a", end: "c", prefix: "a", reverse: true, limit: 2 };
    const copy = { ...options };
    await storage.list(options);
    expect(options).toEqual(copy);
  });

  it("list: converts non-string bounds with String()", async () => {
    storage = await openStorage({ backend });
    await storage.put({ "1": 1, "2": 2, "3": 3 });
    const options = { start: 2, end: 3 } as unknown as ListOptions;
    expect(keysOf(await storage.list(options))).toEqual(["2"]);
  });

  it("list: values are fresh copies", async () => {
    storage = await openStorage({ backend });
    await storage.put("o", { n: 1 });
    const first = (await storage.list<{ n: number }>()).get("o");
    if (first === undefined) throw new Error("missing");
    first.n = 99;
    expect((await storage.list()).get("o")).toEqual({ n: 1 });
  });

  it("list: ignores allowConcurrency, noCache and unknown options", async () => {
    await seeded();
    const options = { allowConcurrency: true, noCache: true, bogus: 1 } as ListOptions;
    expect(keysOf(await storage.list(options))).toEqual(KEYS);
  });
});
