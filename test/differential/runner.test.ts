import type { DurableObjectStorage } from "@cloudflare/workers-types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Op, runOnStorage } from "./ops";
import { createTranscriptCodec, type Encoded } from "./transcript-codec";
import { startWorkerd, type WorkerdHandle } from "./workerd";

const codec = createTranscriptCodec();
const enc = (value: unknown): Encoded => codec.encode(value);

/**
 * The smallest storage that lets the runner itself be tested without ObjectStorage: a Map with
 * JS-order keys (deliberately naive; ordering and limits are the real suites' business).
 */
function mapStorage(): DurableObjectStorage {
  const data = new Map<string, unknown>();
  const sorted = () => [...data.keys()].sort();
  const storage = {
    async get(keys: string | string[]) {
      if (Array.isArray(keys))
        return new Map(keys.filter((k) => data.has(k)).map((k) => [k, structuredClone(data.get(k))]));
      return structuredClone(data.get(String(keys)));
    },
    async put(key: string | Record<string, unknown>, value?: unknown) {
      if (typeof key === "object") for (const [k, v] of Object.entries(key)) data.set(k, structuredClone(v));
      else if (value === undefined) throw new TypeError("put() called with undefined value.");
      else data.set(String(key), structuredClone(value));
    },
    async delete(keys: string | string[]) {
      if (Array.isArray(keys)) return new Set(keys).size - [...new Set(keys)].filter((k) => !data.delete(k)).length;
      return data.delete(String(keys));
    },
    async list(options: { reverse?: boolean; limit?: number } = {}) {
      const keys = options.reverse ? sorted().reverse() : sorted();
      return new Map(keys.slice(0, options.limit).map((k) => [k, data.get(k)]));
    },
    async deleteAll() {
      data.clear();
    },
    async sync() {},
    async transaction(closure: (txn: unknown) => Promise<unknown>) {
      const before = new Map(data);
      const txn = { ...storage, rollback: () => data.clear() };
      try {
        return await closure(txn);
      } catch (error) {
        data.clear();
        for (const [k, v] of before) data.set(k, v);
        throw error;
      }
    },
  };
  return storage as unknown as DurableObjectStorage;
}

describe("transcript codec", () => {
  it("encode/decode: round-trips what plain JSON loses", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const sparse: unknown[] = [1];
    sparse[2] = 3;
    const values: unknown[] = [
      undefined,
      Number.NaN,
      -0,
      Number.POSITIVE_INFINITY,
      10n ** 30n,
      new Map<unknown, unknown>([
        ["b", 1],
        ["a", new Set([1, "x"])],
      ]),
      new Date(0),
      /x+/giu,
      new Uint16Array([1, 2, 65535]),
      new Uint8Array(new ArrayBuffer(8), 2, 3),
      new DataView(new ArrayBuffer(4)),
      new RangeError("boom"),
      sparse,
      cyclic,
      [undefined, null],
    ];
    for (const value of values) {
      const json = JSON.parse(JSON.stringify(enc(value))) as Encoded;
      expect(enc(codec.decode(json))).toEqual(enc(value));
    }
    expect(enc(-0)).not.toEqual(enc(0));
    expect(
      enc(
        new Map([
          ["a", 1],
          ["b", 2],
        ]),
      ),
    ).not.toEqual(
      enc(
        new Map([
          ["b", 2],
          ["a", 1],
        ]),
      ),
    );
  });
});

describe("runOnStorage", () => {
  it("runOnStorage: records values, errors and transaction inner results in order", async () => {
    const ops: Op[] = [
      { op: "put", key: "b", value: enc(new Map([["x", -0]])) },
      { op: "put", key: "a", value: enc(undefined) },
      { op: "get", key: "b" },
      {
        op: "transaction",
        ops: [
          { op: "put", key: "c", value: 1 },
          { op: "throw", message: "no" },
        ],
      },
      { op: "list", options: enc({ reverse: true }) },
      { op: "deleteMany", keys: ["b", "b", "zz"] },
      { op: "kvGet", key: "a" },
    ];
    const results = await runOnStorage(mapStorage(), ops);
    expect(results).toEqual([
      { ok: true, value: enc(undefined) },
      { ok: false, error: { name: "TypeError", message: "put() called with undefined value." } },
      { ok: true, value: enc(new Map([["x", -0]])) },
      { ok: false, error: { name: "Error", message: "no" }, inner: [{ ok: true, value: enc(undefined) }] },
      { ok: true, value: enc(new Map([["b", new Map([["x", -0]])]])) },
      { ok: true, value: 1 },
      { ok: false, error: { name: "TypeError", message: expect.stringContaining("") } },
    ]);
  });
});

describe("workerd harness", () => {
  let workerd: WorkerdHandle;
  beforeAll(async () => {
    workerd = await startWorkerd();
  });
  afterAll(async () => {
    await workerd?.dispose();
  });

  it("run: executes the embedded runner in workerd on a fresh object per run", async () => {
    const ops: Op[] = [
      { op: "get", key: "a" },
      { op: "put", key: "a", value: enc(new Map([["z", Number.NaN]])) },
      { op: "get", key: "a" },
    ];
    const first = await workerd.run(ops);
    expect(first).toEqual([
      { ok: true, value: enc(undefined) },
      { ok: true, value: enc(undefined) },
      { ok: true, value: enc(new Map([["z", Number.NaN]])) },
    ]);
    // A second run starts from empty storage again.
    expect(await workerd.run(ops)).toEqual(first);
  });

  it("run: reports SQL results and errors from both backends", async () => {
    const sql: Op[] = [{ op: "sql", query: "SELECT 1 AS one", read: "toArray" }];
    const [sqlite] = await workerd.run(sql);
    expect(sqlite).toMatchObject({ ok: true });
    const [cache] = await workerd.run(sql, { backend: "cache" });
    expect(cache).toMatchObject({ ok: false, error: { name: "Error" } });
  });
});
