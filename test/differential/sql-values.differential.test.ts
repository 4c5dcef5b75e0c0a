/**
 * The SQL API's values compared with workerd, one object class written once and run in both
 * worlds (see `same-source.ts`): how bindings of every JavaScript type bind (buffers of every
 * kind, detached and shrunk ones included) and come back, and what a multi-statement query's
 * cached statements do when it runs again. Each request answers a JSON description
 * of what the object's code saw: values tagged by type (`AB[1,2]` for an ArrayBuffer), errors by
 * class and message.
 */
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import { classFromSource, type Outcome, objectWorker, ourSide, startMiniflare, workerdSide } from "./same-source";
import { DEFAULT_COMPATIBILITY_DATE } from "./workerd";

const SQL_VALUES_SOURCE = `
class SqlValuesProbe {
  constructor(ctx, env) {
    this.ctx = ctx;
  }

  async fetch(request) {
    const sql = this.ctx.storage.sql;
    const describe = (v) => {
      if (v === undefined) return "(undefined)";
      if (typeof v === "number") return Object.is(v, -0) ? "-0" : Number.isNaN(v) ? "NaN" : Number.isFinite(v) ? v : String(v);
      if (v instanceof ArrayBuffer) return "AB[" + [...new Uint8Array(v)].join(",") + "]";
      if (typeof v === "string") return JSON.stringify(v);
      if (Array.isArray(v)) return v.map(describe);
      if (v && typeof v === "object") {
        const out = {};
        for (const k of Object.keys(v)) out[k] = describe(v[k]);
        return out;
      }
      return v;
    };
    const outcome = (f) => {
      try {
        return { value: describe(f()) };
      } catch (e) {
        return { error: e.constructor.name, message: e.message };
      }
    };
    const bound = (value) => outcome(() => sql.exec("SELECT typeof(?1) AS type, ?1 AS value", value).one());
    const detach = (buffer) => structuredClone(buffer, { transfer: [buffer] });
    switch (new URL(request.url).pathname) {
      case "/buffers": {
        const shared = new SharedArrayBuffer(4);
        new Uint8Array(shared).set([1, 2, 3, 4]);
        const out = {
          sharedArrayBuffer: bound(shared),
          uint8OverShared: bound(new Uint8Array(shared, 1, 2)),
          dataViewOverShared: bound(new DataView(shared, 2)),
          arrayBuffer: bound(new Uint8Array([5, 6]).buffer),
          subarray: bound(new Uint8Array([1, 2, 3, 4]).subarray(1, 3)),
          int16: bound(new Int16Array([-2])),
          float64: bound(new Float64Array([1])),
          bigInt64: bound(new BigInt64Array([1n])),
          empty: bound(new ArrayBuffer(0)),
        };
        const growable = new SharedArrayBuffer(2, { maxByteLength: 8 });
        growable.grow(3);
        out.grownShared = bound(growable);
        const resizable = new ArrayBuffer(2, { maxByteLength: 8 });
        const tracking = new Uint8Array(resizable);
        resizable.resize(3);
        tracking[2] = 9;
        out.lengthTracking = bound(tracking);
        const shrunk = new ArrayBuffer(8, { maxByteLength: 8 });
        const shrunkBytes = new Uint8Array(shrunk, 4, 4);
        const shrunkView = new DataView(shrunk, 4, 4);
        shrunk.resize(2);
        out.outOfBoundsTypedArray = bound(shrunkBytes);
        out.outOfBoundsDataView = bound(shrunkView);
        const detached = new ArrayBuffer(4);
        const detachedBytes = new Uint16Array(detached, 2, 1);
        const detachedView = new DataView(detached, 1, 2);
        detach(detached);
        out.detachedArrayBuffer = bound(detached);
        out.detachedTypedArray = bound(detachedBytes);
        out.detachedDataView = bound(detachedView);
        sql.exec("CREATE TABLE t (x)");
        sql.exec("INSERT INTO t VALUES (?)", shared);
        new Uint8Array(shared)[0] = 99;
        out.storedCopy = outcome(() => sql.exec("SELECT typeof(x) AS type, x AS value FROM t").one());
        return Response.json(out);
      }
      case "/multi-statement-reruns": {
        // workerd steps a statement before the last once when it compiles the query and keeps it
        // in its cache: one that stopped at a row fails the query's next cached run.
        const run = (q, ...b) => outcome(() => sql.exec(q, ...b).raw().toArray());
        const out = [];
        for (let i = 0; i < 3; i++) out.push(run("SELECT 1; SELECT 2"));
        sql.exec("CREATE TABLE t (a)");
        const mixed = "INSERT INTO t VALUES (1); SELECT 1; INSERT INTO t VALUES (2); VALUES (3); SELECT count(*) FROM t";
        for (let i = 0; i < 5; i++) out.push(run(mixed));
        out.push(run("SELECT a, count(*) FROM t GROUP BY a ORDER BY a"));
        const returning = "INSERT INTO t VALUES (5) RETURNING a; SELECT count(*) FROM t WHERE a = 5";
        for (let i = 0; i < 3; i++) out.push(run(returning));
        const ending = "INSERT INTO t VALUES (6); SELECT * FROM t WHERE a > 100; SELECT count(*) FROM t WHERE a = 6";
        for (let i = 0; i < 3; i++) out.push(run(ending));
        out.push(run("SELECT 1; SELECT ?"), run("SELECT 1; SELECT ?", 1), run("SELECT 1; SELECT ?", 1));
        const two = "SELECT 1; SELECT 2 UNION ALL SELECT 3";
        const reading = sql.exec(two);
        reading.next();
        out.push(run(two));
        reading.toArray();
        out.push(run(two), run(two));
        const before = "SELECT 1; SELECT 4";
        out.push(run(before));
        await this.ctx.storage.deleteAll();
        for (let i = 0; i < 3; i++) out.push(run(before));
        const failing = "SELECT 1; INSERT INTO t VALUES (1); SELECT count(*) FROM t";
        out.push(run(failing));
        sql.exec("CREATE TABLE t (a)");
        for (let i = 0; i < 3; i++) out.push(run(failing));
        out.push(run("SELECT 1; SELECT 5"), run("SELECT 1; SELECT 5"));
        return Response.json(out);
      }
      case "/statement-cache-size": {
        // The cache's 1 MiB bound counts UTF-8 bytes: 12 queries of about 100,000 bytes (50,000
        // UTF-16 code units) evict the first query, which then compiles anew (its next run works).
        const run = (q) => outcome(() => sql.exec(q).raw().toArray());
        const out = [run("SELECT 1; SELECT 2")];
        for (let i = 0; i < 12; i++) sql.exec("SELECT " + i + " AS x, '" + "é".repeat(49980) + "' AS y");
        out.push(run("SELECT 1; SELECT 2"), run("SELECT 1; SELECT 2"));
        return Response.json(out);
      }
      case "/iterators": {
        // What raw() and [Symbol.iterator]() return: the runtime's iterator helpers depend on the
        // runtime (workerd's V8 has them, Node 20 not), so only the prototype chain is compared.
        const iteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
        const shape = (iterator) => {
          const chain = [];
          for (let p = Object.getPrototypeOf(iterator); p; p = Object.getPrototypeOf(p)) {
            chain.push(p === iteratorPrototype ? "%IteratorPrototype%" : p === Object.prototype ? "Object.prototype" : Object.prototype.toString.call(p));
          }
          return { chain, own: Object.getOwnPropertyNames(iterator), self: iterator[Symbol.iterator]() === iterator, next: iterator.next() };
        };
        const query = "SELECT 1 AS a UNION ALL SELECT 2";
        return Response.json({ raw: shape(sql.exec(query).raw()), rows: shape(sql.exec(query)[Symbol.iterator]()) });
      }
      default:
        return new Response("not found", { status: 404 });
    }
  }
}
`;

const SqlValuesProbe = classFromSource(SQL_VALUES_SOURCE, "SqlValuesProbe");

let mf: Miniflare | undefined;

beforeAll(async () => {
  mf = await startMiniflare([
    objectWorker("sql-values", SQL_VALUES_SOURCE, "SqlValuesProbe", DEFAULT_COMPATIBILITY_DATE),
  ]);
});

afterAll(async () => {
  await mf?.dispose();
});

/** The same request to a fresh object on each side. */
async function both(path: string): Promise<{ workerd: Outcome; ours: Outcome }> {
  if (mf === undefined) throw new Error("Miniflare did not start");
  const context = await ObjectContext.create(SqlValuesProbe, { id: randomUUID() });
  try {
    const workerd = await (await workerdSide(mf, "sql-values", randomUUID())).request(path);
    const ours = await ourSide(context).request(path);
    return { workerd, ours };
  } finally {
    await context.close();
  }
}

describe("sql values: what bindings become, compared with workerd", () => {
  it("buffers of every kind bind as BLOB: SharedArrayBuffer, views over it, detached and shrunk buffers (empty)", async () => {
    const { workerd, ours } = await both("/buffers");
    expect(workerd.ok).toBe(true);
    const body = (workerd as { body: Record<string, { value?: { type: string; value: string } }> }).body;
    // The platform's answers this test pins (so a harness that answered nothing could not pass).
    expect(body.sharedArrayBuffer?.value).toEqual({ type: '"blob"', value: "AB[1,2,3,4]" });
    expect(body.detachedDataView?.value).toEqual({ type: '"blob"', value: "AB[]" });
    expect(body.storedCopy?.value).toEqual({ type: '"blob"', value: "AB[1,2,3,4]" });
    expect(ours).toEqual(workerd);
  });

  it("a statement before the last that stopped at a row fails the query's next cached run once (also around a cursor, deleteAll)", async () => {
    const { workerd, ours } = await both("/multi-statement-reruns");
    expect(workerd.ok).toBe(true);
    const busy = { error: "Error", message: "A SQL prepared statement can only be executed once at a time." };
    const outcomes = (workerd as { body: unknown[] }).body;
    expect(outcomes.slice(0, 3)).toEqual([{ value: [[2]] }, busy, { value: [[2]] }]);
    expect(outcomes.filter((o) => JSON.stringify(o) === JSON.stringify(busy))).toHaveLength(8);
    expect(ours).toEqual(workerd);
  });

  it("raw() and [Symbol.iterator]() return a RawIterator and a RowIterator inheriting %IteratorPrototype%", async () => {
    const { workerd, ours } = await both("/iterators");
    expect(workerd.ok && (workerd.body as { raw: { chain: string[] } }).raw.chain).toEqual([
      "[object RawIterator]",
      "%IteratorPrototype%",
      "Object.prototype",
    ]);
    expect(ours).toEqual(workerd);
  });

  it("the statement cache's bound counts the SQL text in UTF-8 bytes", async () => {
    const { workerd, ours } = await both("/statement-cache-size");
    const busy = { error: "Error", message: "A SQL prepared statement can only be executed once at a time." };
    expect(workerd.ok && (workerd.body as unknown[])[2]).toEqual(busy);
    expect(ours).toEqual(workerd);
  });
});
