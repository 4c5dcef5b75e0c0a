/**
 * Differential tests of what an object's code sees (issue 15 "API surface", "Object context and
 * events"; issue 14 §8): the member names of `ctx`, `ctx.storage` and `txn`; the errors of
 * malformed calls; how `put(entries)` reads getters; what `blockConcurrencyWhile` commits before its
 * callback. One class, the same source text, in real workerd (Miniflare) and in an ObjectContext.
 */
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import { MAX_BLOCK_CONCURRENCY_WHILE_DEPTH, NESTED_TOO_DEEPLY_MESSAGE } from "../../src/context/section-depth";
import { REFERENCE_LAGS } from "./known-deviations";
import { classFromSource, type Outcome, objectWorker, ourSide, startMiniflare, workerdSide } from "./same-source";
import { DEFAULT_COMPATIBILITY_DATE } from "./workerd";

const SURFACE_PROBE_SOURCE = `
class SurfaceProbe {
  constructor(ctx, env) {
    this.ctx = ctx;
  }

  async fetch(request) {
    // Every name an object's code can reach on o: own and inherited, up to Object.prototype.
    const names = (o) => {
      const out = new Set();
      for (let p = o; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
        for (const n of Object.getOwnPropertyNames(p)) if (n !== "constructor") out.add(n);
      }
      return [...out].sort();
    };
    const outcome = async (f) => {
      try {
        const value = await f();
        return { value: value === undefined ? "(undefined)" : value };
      } catch (e) {
        return { error: e.constructor.name, name: e.name, message: e.message };
      }
    };
    const storage = this.ctx.storage;
    switch (new URL(request.url).pathname) {
      case "/names": {
        const out = { ctx: names(this.ctx), storage: names(storage), kv: names(storage.kv), sql: names(storage.sql) };
        await storage.transaction(async (txn) => {
          out.txn = names(txn);
        });
        return Response.json(out);
      }
      case "/tags": {
        // What Object.prototype.toString shows, and which members a for…in loop visits.
        const shape = (o) => {
          const visited = [];
          for (const n in o) visited.push(n);
          return { tag: Object.prototype.toString.call(o), visited: visited.sort(), own: Object.keys(o) };
        };
        const out = {
          ctx: shape(this.ctx),
          storage: shape(storage),
          kv: shape(storage.kv),
          sql: shape(storage.sql),
          cursor: shape(storage.sql.exec("SELECT 1")),
          id: shape(this.ctx.id),
        };
        await storage.transaction(async (txn) => {
          out.txn = shape(txn);
        });
        return Response.json(out);
      }
      case "/props": {
        const props = this.ctx.props;
        return Response.json({
          type: props === null ? "null" : typeof props,
          json: JSON.stringify(props) ?? "undefined",
          plain: props !== null && typeof props === "object" && Object.getPrototypeOf(props) === Object.prototype,
        });
      }
      case "/arguments": {
        const out = {};
        out.get = await outcome(() => storage.get());
        out.delete = await outcome(() => storage.delete());
        out.getUndefined = await outcome(() => storage.get(undefined));
        out.deleteUndefined = await outcome(() => storage.delete(undefined));
        await storage.transaction(async (txn) => {
          out.txnGet = await outcome(() => txn.get());
          out.txnDelete = await outcome(() => txn.delete());
          out.txnGetUndefined = await outcome(() => txn.get(undefined));
        });
        out.putSymbol = await outcome(() => storage.put(Symbol(), 1));
        out.putSymbolNamed = await outcome(() => storage.put(Symbol("x"), 1));
        out.getSymbol = await outcome(() => storage.get(Symbol("x")));
        out.deleteSymbol = await outcome(() => storage.delete(Symbol("x")));
        out.putProxy = await outcome(() => storage.put("p", new Proxy({}, {})));
        out.putProxyArray = await outcome(() => storage.put("p", new Proxy([1], {})));
        out.putNestedProxy = await outcome(() => storage.put("p", { inner: new Proxy({ a: 1 }, {}) }));
        out.putEntriesProxy = await outcome(() => storage.put({ p: new Proxy({}, {}) }));
        out.afterProxies = await outcome(() => storage.get("p"));
        return Response.json(out);
      }
      case "/getters": {
        // A getter read twice would see "undefined" the second time and leave a key without a value.
        let reads = 0;
        const entries = {
          get a() {
            reads++;
            return reads === 1 ? "first" : undefined;
          },
          b: 2,
        };
        const put = await outcome(() => storage.put(entries));
        return Response.json({ put, reads, stored: Object.fromEntries(await storage.list()) });
      }
      case "/pragma-in-block": {
        storage.sql.exec("CREATE TABLE IF NOT EXISTS parent (id INTEGER PRIMARY KEY)");
        storage.sql.exec("CREATE TABLE IF NOT EXISTS child (pid INTEGER REFERENCES parent(id))");
        storage.sql.exec("PRAGMA foreign_keys = ON");
        // An un-awaited write opens the implicit batch; blockConcurrencyWhile must commit it first,
        // so the connection-level PRAGMA inside the callback takes effect.
        storage.put("before", 1);
        const inside = await outcome(() =>
          this.ctx.blockConcurrencyWhile(async () => {
            storage.sql.exec("PRAGMA foreign_keys = OFF");
            const fk = storage.sql.exec("PRAGMA foreign_keys").one().foreign_keys;
            storage.sql.exec("INSERT INTO child VALUES (42)");
            storage.sql.exec("PRAGMA foreign_keys = ON");
            return fk;
          }),
        );
        const children = storage.sql.exec("SELECT count(*) AS n FROM child").one().n;
        return Response.json({ inside, children, before: await storage.get("before") });
      }
      case "/id": {
        // ctx.id as the object's code sees it: member names, property shapes, and what equals() takes.
        const id = this.ctx.id;
        const proto = Object.getPrototypeOf(id);
        const shape = (o, k) => {
          const d = Object.getOwnPropertyDescriptor(o, k);
          return d && { writable: d.writable, enumerable: d.enumerable, configurable: d.configurable, type: typeof d.value };
        };
        let assigned;
        try {
          id.name = "other";
          assigned = "no error";
        } catch (e) {
          assigned = e.constructor.name;
        }
        return Response.json({
          names: names(id),
          own: Object.getOwnPropertyNames(id),
          keys: Object.keys(id),
          name: shape(id, "name"),
          nameType: typeof id.name,
          jurisdiction: shape(id, "jurisdiction"),
          jurisdictionValue: id.jurisdiction === undefined ? "(undefined)" : id.jurisdiction,
          toString: shape(proto, "toString"),
          equals: shape(proto, "equals"),
          tag: Object.prototype.toString.call(id),
          hex: /^[0-9a-f]{64}$/.test(String(id)),
          json: Object.keys(JSON.parse(JSON.stringify(id))),
          assigned,
          equalsSelf: await outcome(() => id.equals(id)),
          equalsString: await outcome(() => id.equals(id.toString())),
          equalsLookalike: await outcome(() => id.equals({ toString: () => id.toString() })),
          equalsNothing: await outcome(() => id.equals()),
          construct: await outcome(() => new proto.constructor()),
        });
      }
      case "/nested-limit": {
        // The innermost call that the platform refuses reports how deep it got; every level returns that.
        let depth = 0;
        const nest = async () => {
          depth++;
          if (depth >= 100) return { depth };
          try {
            return await this.ctx.blockConcurrencyWhile(nest);
          } catch (e) {
            return { depth, error: e.constructor.name, message: e.message };
          }
        };
        const nested = await outcome(() => this.ctx.blockConcurrencyWhile(nest));
        // Side by side is not nested: a hundred calls at one level, at the top and inside a callback.
        const many = (n) => Promise.all(Array.from({ length: n }, (_, i) => this.ctx.blockConcurrencyWhile(async () => i)));
        const sideBySide = await outcome(async () => (await many(100)).length);
        const sideBySideInside = await outcome(() => this.ctx.blockConcurrencyWhile(async () => (await many(100)).length));
        const afterwards = await outcome(() => this.ctx.blockConcurrencyWhile(async () => "still alive"));
        return Response.json({ nested, sideBySide, sideBySideInside, afterwards });
      }
      default:
        return new Response("not found", { status: 404 });
    }
  }
}
`;

const SurfaceProbe = classFromSource(SURFACE_PROBE_SOURCE, "SurfaceProbe");

/**
 * Members this library adds on purpose (docs/semantics.md, "What objects see"): `ctx.sendOutgoing`
 * and `ctx.fetch` send through the output gate; a storage opened on its own needs `close`/`abort`
 * and says how it was opened (`backend`, `codec`).
 */
const ACTORSTORE_EXTRAS: Readonly<Record<string, readonly string[]>> = {
  ctx: ["fetch", "sendOutgoing"],
  storage: ["abort", "backend", "close", "codec"],
  kv: [],
  sql: [],
  txn: [],
  cursor: [],
  id: [],
};

/**
 * Members the platform's for…in visits and ours does not: `ctx.exports` and `ctx.facets` are not
 * supported and throw when read (docs/semantics.md), so a loop that reads what it visits must not
 * meet them.
 */
const NOT_VISITED: Readonly<Record<string, readonly string[]>> = { ctx: ["exports", "facets"] };

let mf: Miniflare | undefined;

beforeAll(async () => {
  mf = await startMiniflare([
    objectWorker("surface", SURFACE_PROBE_SOURCE, "SurfaceProbe", DEFAULT_COMPATIBILITY_DATE),
  ]);
});

afterAll(async () => {
  await mf?.dispose();
});

async function both(path: string): Promise<{ workerd: Outcome; ours: Outcome }> {
  if (mf === undefined) throw new Error("Miniflare did not start");
  const context = await ObjectContext.create(SurfaceProbe, { id: randomUUID() });
  try {
    const workerd = await (await workerdSide(mf, "surface", randomUUID())).request(path);
    const ours = await ourSide(context).request(path);
    return { workerd, ours };
  } finally {
    await context.close();
  }
}

function body(outcome: Outcome): Record<string, unknown> {
  if (!outcome.ok) throw new Error(`request failed: ${outcome.name}: ${outcome.error}`);
  return outcome.body as Record<string, unknown>;
}

describe("surface: what an object's code sees, compared with workerd", () => {
  it("member names of ctx, ctx.storage, storage.kv, storage.sql and txn are the platform's (plus the documented extras)", async () => {
    const { workerd, ours } = await both("/names");
    const platform = body(workerd) as Record<string, string[]>;
    const own = body(ours) as Record<string, string[]>;
    for (const what of ["ctx", "storage", "kv", "sql", "txn"]) {
      const extras = ACTORSTORE_EXTRAS[what] ?? [];
      expect(platform[what], `workerd's ${what}`).toBeDefined();
      expect(
        (own[what] ?? []).filter((n) => !extras.includes(n)),
        `${what}: every name ours shows that the platform does not is a bug (internals must stay private)`,
      ).toEqual(platform[what]);
      // The extras really are extras: if the platform grows one, this list must shrink.
      for (const extra of extras) expect(platform[what], `${what}.${extra}`).not.toContain(extra);
    }
  });

  it("class names (Object.prototype.toString) and the members a for…in loop visits are the platform's", async () => {
    // Regression: every object showed "[object Object]" and hid its methods from for…in, where the
    // platform shows "[object DurableObjectStorage]" and friends and defines its methods enumerable.
    const { workerd, ours } = await both("/tags");
    const platform = body(workerd) as Record<string, { tag: string; visited: string[]; own: string[] }>;
    const own = body(ours) as Record<string, { tag: string; visited: string[]; own: string[] }>;
    for (const what of ["ctx", "storage", "kv", "sql", "cursor", "id", "txn"]) {
      const extras = ACTORSTORE_EXTRAS[what] ?? [];
      expect(platform[what]?.tag, `workerd's ${what}`).toMatch(/^\[object [A-Za-z]+\]$/);
      expect(own[what]?.tag, `${what}'s class name`).toBe(platform[what]?.tag);
      // Own properties the platform defines lazily or not at all (ctx.facets, ctx.exports,
      // storage.kv/sql as own properties) are compared by the /names test; here every visited
      // name of ours must be one the platform's loop visits too, and the other way round.
      const visited = (own[what]?.visited ?? []).filter((n) => !extras.includes(n));
      const skipped = NOT_VISITED[what] ?? [];
      expect(visited, `${what}: members a for…in loop visits`).toEqual(
        (platform[what]?.visited ?? []).filter((n) => !skipped.includes(n)),
      );
      for (const name of skipped) expect(platform[what]?.visited, `${what}.${name}`).toContain(name);
      // Own enumerable properties, in order (Object.keys, JSON.stringify, spreading): ctx's are
      // compared by the /names and /props tests (its facets and exports are not supported here).
      if (what !== "ctx") expect(own[what]?.own, `${what}: Object.keys`).toEqual(platform[what]?.own);
    }
  });

  it("ctx.props is the platform's empty object when no props are given", async () => {
    const { workerd, ours } = await both("/props");
    expect(body(workerd)).toEqual({ type: "object", json: "{}", plain: true });
    expect(body(ours)).toEqual(body(workerd));
  });

  it("malformed calls fail with the platform's errors: no argument, Symbol keys, Proxy values", async () => {
    const { workerd, ours } = await both("/arguments");
    expect(body(ours)).toEqual(body(workerd));
  });

  it("put(entries) reads each getter once", async () => {
    const { workerd, ours } = await both("/getters");
    expect(body(workerd)).toMatchObject({ reads: 1, stored: { a: "first", b: 2 } });
    expect(body(ours)).toEqual(body(workerd));
  });

  it("blockConcurrencyWhile commits the open batch first, so a PRAGMA inside it takes effect", async () => {
    const { workerd, ours } = await both("/pragma-in-block");
    expect(body(workerd)).toEqual({ inside: { value: 0 }, children: 1, before: 1 });
    expect(body(ours)).toEqual(body(workerd));
  });

  it("ctx.id has the platform's members and property shapes (name, jurisdiction, toString, equals)", async () => {
    const { workerd, ours } = await both("/id");
    expect(body(workerd)).toMatchObject({
      names: ["equals", "jurisdiction", "name", "toString"],
      nameType: "string",
      jurisdictionValue: "(undefined)",
      tag: "[object DurableObjectId]",
      json: ["name"],
      assigned: "TypeError",
    });
    expect(body(ours)).toEqual(body(workerd));
  });

  it(`nested blockConcurrencyWhile: the platform's cap at depth ${MAX_BLOCK_CONCURRENCY_WHILE_DEPTH} (the reference predates it, known-deviations.ts)`, async () => {
    const { workerd, ours } = await both("/nested-limit");
    const sideBySide = {
      sideBySide: { value: 100 },
      sideBySideInside: { value: 100 },
      afterwards: { value: "still alive" },
    };
    // Miniflare's bundled workerd has no cap: it nests to 100 (REFERENCE_LAGS "bcw-depth-cap").
    expect(body(workerd)).toEqual({ nested: { value: { depth: 100 } }, ...sideBySide });
    expect(body(ours)).toEqual({
      nested: {
        value: { depth: MAX_BLOCK_CONCURRENCY_WHILE_DEPTH, error: "Error", message: NESTED_TOO_DEEPLY_MESSAGE },
      },
      ...sideBySide,
    });
    expect(REFERENCE_LAGS.map((lag) => lag.id)).toContain("bcw-depth-cap");
  });
});
