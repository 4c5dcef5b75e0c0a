import type { DurableObjectNamespace, DurableObjectStub } from "@cloudflare/workers-types";
import { afterEach, describe, expect, expectTypeOf, test } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import { ObjectId } from "../../src/context/object-id";
import type { ObjectNamespace, ObjectStub } from "../../src/host/namespace";
import { ObjectHost } from "../../src/host/object-host";
import { FakeClock } from "../../src/util/clock";

class Counter extends DurableObject {
  async increment(by: number): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + by;
    await this.ctx.storage.put("n", n);
    return n;
  }
  echo(value: unknown): unknown {
    return value;
  }
  #secret = { hits: 0 };
  shared(): { hits: number } {
    this.#secret.hits++;
    return this.#secret;
  }
  secretHits(): number {
    return this.#secret.hits;
  }
  boom(): never {
    const e = new RangeError("bad thing") as RangeError & { extra?: number };
    e.extra = 5;
    throw e;
  }
  throwString(): never {
    throw "plain";
  }
  returnSymbol(): symbol {
    return Symbol("q");
  }
  get answer(): number {
    return 42;
  }
  field = 7;
  whoAmI(): { id: string; name: string | null } {
    return { id: this.ctx.id.toString(), name: this.ctx.id.name ?? null };
  }
  override async fetch(request: Request): Promise<Response> {
    return new Response(`fetched ${new URL(request.url).pathname} ${request.method}`);
  }
}

class NoFetch {
  ping(): string {
    return "pong";
  }
}

const hosts: ObjectHost[] = [];
function makeHost() {
  const host = new ObjectHost({
    namespaces: { COUNTER: Counter, OTHER: Counter, PLAIN: NoFetch },
    clock: new FakeClock(),
  });
  hosts.push(host as unknown as ObjectHost);
  return host;
}
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

describe("namespace ids", () => {
  test("idFromName: deterministic, 64 lowercase hex digits, keeps the name, scoped by namespace", () => {
    const { env } = makeHost();
    for (const name of ["a", "", "ünïcødé", "x".repeat(5000), "a\u0000b", "🙂"]) {
      const id = env.COUNTER.idFromName(name);
      expect(id.toString()).toMatch(/^[0-9a-f]{64}$/);
      expect(id.name).toBe(name);
      expect(env.COUNTER.idFromName(name).toString()).toBe(id.toString());
      expect(env.OTHER.idFromName(name).toString()).not.toBe(id.toString());
      expect(id.equals(env.COUNTER.idFromName(name))).toBe(true);
    }
    expect(env.COUNTER.idFromName("a").toString()).not.toBe(env.COUNTER.idFromName("b").toString());
    // Another host with the same namespace name gives the same ids (stable across runs).
    expect(makeHost().env.COUNTER.idFromName("a").toString()).toBe(env.COUNTER.idFromName("a").toString());
    // The unscoped ObjectId.fromName is a different id.
    expect(ObjectId.fromName("a").toString()).not.toBe(env.COUNTER.idFromName("a").toString());
  });

  test("idFromString: round-trips, accepts upper case, rejects bad strings and other namespaces' ids with the platform's texts", () => {
    const { env } = makeHost();
    const id = env.COUNTER.idFromName("a");
    const parsed = env.COUNTER.idFromString(id.toString());
    expect(parsed.equals(id)).toBe(true);
    expect(parsed.name).toBeUndefined();
    expect(env.COUNTER.idFromString(id.toString().toUpperCase()).toString()).toBe(id.toString());
    for (const bad of ["zz", "", "a".repeat(63), "a".repeat(65), ` ${"a".repeat(63)}`, 5, null]) {
      expect(() => env.COUNTER.idFromString(bad as string)).toThrowError(
        new TypeError("Invalid Durable Object ID: must be 64 hex digits"),
      );
    }
    expect(() => env.OTHER.idFromString(id.toString())).toThrowError(
      new TypeError("Durable Object ID is not valid for this namespace."),
    );
    expect(() => env.COUNTER.idFromString("a".repeat(64))).toThrowError(
      new TypeError("Durable Object ID is not valid for this namespace."),
    );
  });

  test("newUniqueId: distinct, parseable by its own namespace only, no name", () => {
    const { env } = makeHost();
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const id = env.COUNTER.newUniqueId();
      expect(id.name).toBeUndefined();
      expect(env.COUNTER.idFromString(id.toString()).equals(id)).toBe(true);
      expect(() => env.OTHER.idFromString(id.toString())).toThrow(TypeError);
      seen.add(id.toString());
    }
    expect(seen.size).toBe(200);
    expect(env.COUNTER.newUniqueId({ jurisdiction: "eu" }).toString()).toMatch(/^[0-9a-f]{64}$/);
    expect(() => env.COUNTER.newUniqueId({ jurisdiction: "mars" as "eu" })).toThrow(TypeError);
    expect(env.COUNTER.jurisdiction("eu").idFromName("a").toString()).toBe(env.COUNTER.idFromName("a").toString());
  });

  test("get: rejects what is not an id, and another namespace's id", () => {
    const { env } = makeHost();
    expect(() => env.COUNTER.get("abc" as unknown as ObjectId)).toThrowError(
      new TypeError(
        "Failed to execute 'get' on 'DurableObjectNamespace': parameter 1 is not of type 'DurableObjectId'.",
      ),
    );
    expect(() => env.COUNTER.get({ toString: () => "a".repeat(64) })).toThrow(TypeError);
    expect(() => env.COUNTER.get(env.OTHER.idFromName("a"))).toThrowError(
      new TypeError("Durable Object ID is not valid for this namespace."),
    );
  });

  test("stub.id and stub.name, as the object sees them", async () => {
    const { env } = makeHost();
    const byName = env.COUNTER.getByName("bn");
    expect(byName.name).toBe("bn");
    expect(byName.id.equals(env.COUNTER.idFromName("bn"))).toBe(true);
    expect(await byName.whoAmI()).toEqual({ id: env.COUNTER.idFromName("bn").toString(), name: "bn" });
    const byString = env.COUNTER.get(env.COUNTER.idFromString(byName.id.toString()));
    expect(byString.name).toBeUndefined();
    expect(Object.keys(byName).sort()).toEqual(["id", "name"]);
    expect(String(byName.id)).toBe(byName.id.toString());
    // A stub is not a thenable: awaiting it gives the stub.
    expect(await Promise.resolve(byName)).toBe(byName);
  });
});

describe("stubs: RPC across the boundary", () => {
  test("methods are called with cloned arguments; results are cloned", async () => {
    const { env } = makeHost();
    const stub = env.COUNTER.get(env.COUNTER.idFromName("a"));
    expect(await stub.increment(2)).toBe(2);
    expect(await stub.increment(3)).toBe(5);
    // The same object through another stub; another name is another object.
    expect(await env.COUNTER.getByName("a").increment(0)).toBe(5);
    expect(await env.COUNTER.getByName("b").increment(1)).toBe(1);
    expect(await env.OTHER.getByName("a").increment(1)).toBe(1);

    const arg = { a: 1, nested: { list: [1, 2] } };
    const back = (await stub.echo(arg)) as typeof arg;
    expect(back).toEqual(arg);
    expect(back).not.toBe(arg);
    expect(back.nested).not.toBe(arg.nested);
    const date = (await stub.echo(new Date(5))) as Date;
    expect(date).toBeInstanceOf(Date);
    expect(date.getTime()).toBe(5);
    const map = (await stub.echo(new Map([[1, new Set(["x"])]]))) as Map<number, Set<string>>;
    expect(map).toBeInstanceOf(Map);
    expect(map.get(1)).toEqual(new Set(["x"]));
    expect(await stub.echo(undefined)).toBeUndefined();
    expect(await stub.echo(10n)).toBe(10n);
    const bytes = await stub.echo(new Uint8Array([1, 2, 3]));
    expect(bytes).toEqual(new Uint8Array([1, 2, 3]));
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    const cyc = (await stub.echo(cyclic)) as { self?: unknown };
    expect(cyc.self).toBe(cyc);
    const err = (await stub.echo(new TypeError("tt"))) as TypeError;
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe("tt");

    // The result is a copy: changing it does not change the object's state.
    const first = await stub.shared();
    first.hits = 1000;
    expect(await stub.secretHits()).toBe(1);
  });

  test("values that cannot cross fail with the platform's DataCloneError texts", async () => {
    const { env } = makeHost();
    const stub = env.COUNTER.getByName("a");
    const sym = (await rejection(stub.echo(Symbol("x")))) as DOMException;
    expect(sym).toBeInstanceOf(DOMException);
    expect(sym.name).toBe("DataCloneError");
    expect(sym.message).toBe("Symbol(x) could not be cloned.");
    const nested = (await rejection(stub.echo({ deep: [Symbol("y")] }))) as DOMException;
    expect(nested.message).toBe("Symbol(y) could not be cloned.");
    class K {
      x = 1;
    }
    const instance = (await rejection(stub.echo(new K()))) as DOMException;
    expect(instance.name).toBe("DataCloneError");
    expect(instance.message).toBe('Could not serialize object of type "K". This type does not support serialization.');
    // A function is not cloned: it passes by reference (rpc-references.differential.test.ts).
    const fn = (await stub.echo(() => 1)) as unknown as () => Promise<number>;
    expect(typeof fn).toBe("function");
    expect(await fn()).toBe(1);
    const result = (await rejection(stub.returnSymbol())) as DOMException;
    expect(result.name).toBe("DataCloneError");
    expect(result.message).toBe("Symbol(q) could not be cloned.");
    // None of that hurt the object.
    expect(await stub.increment(1)).toBe(1);
  });

  test("errors are rethrown with their class and message, not shared; a missing method is the platform's TypeError", async () => {
    const { env } = makeHost();
    const stub = env.COUNTER.getByName("a");
    const boom = (await rejection(stub.boom())) as RangeError & { extra?: number; remote?: boolean };
    expect(boom).toBeInstanceOf(RangeError);
    expect(boom.message).toBe("bad thing");
    expect(boom.extra).toBeUndefined();
    // The platform's mark: the object's code threw it (and nothing else is the error's own).
    expect(Object.keys(boom)).toEqual(["remote"]);
    expect(boom.remote).toBe(true);
    // Something thrown that is not an error arrives as an Error describing it, as on the platform.
    const plain = (await rejection(stub.throwString())) as Error & { remote?: boolean };
    expect(plain).toBeInstanceOf(Error);
    expect(plain.message).toBe("plain");
    expect(plain.remote).toBe(true);
    const untyped = stub as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    // "field" is an instance field, "secretHits2" nothing; neither is a method on the class.
    for (const name of ["nope", "field", "secretHits2", "__proto__x"]) {
      const method = untyped[name];
      if (method === undefined) throw new Error(`no stub method for ${name}`);
      const missing = (await rejection(method(1))) as TypeError;
      expect(missing).toBeInstanceOf(TypeError);
      expect(missing.message).toBe(`The RPC receiver does not implement the method "${name}".`);
    }
    // Getters are read by awaiting the property, as on the platform.
    expect(await (stub as unknown as { answer: Promise<number> }).answer).toBe(42);
    expect(await stub.increment(1)).toBe(1);
  });

  test("fetch: a Request, a URL string, and a class without fetch()", async () => {
    const { env } = makeHost();
    const stub = env.COUNTER.getByName("a");
    expect(await (await stub.fetch("http://x/path")).text()).toBe("fetched /path GET");
    expect(await (await stub.fetch(new Request("http://x/q", { method: "POST", body: "b" }))).text()).toBe(
      "fetched /q POST",
    );
    expect(await (await stub.fetch(new URL("http://x/u"))).text()).toBe("fetched /u GET");
    const plain = env.PLAIN.getByName("p");
    const e = (await rejection(plain.fetch("http://x/"))) as Error;
    expect(e.message).toBe("Handler does not export a fetch() function.");
    expect(await plain.ping()).toBe("pong");
    await expect(stub.fetch("not a url")).rejects.toThrow(TypeError);
    expect(() => stub.connect("x")).toThrow(TypeError);
  });
});

describe("types", () => {
  test("a namespace is assignable to the platform's DurableObjectNamespace, a stub to its stub", () => {
    const { env } = makeHost();
    const platform: DurableObjectNamespace = env.COUNTER;
    expect(platform).toBe(env.COUNTER);
    const stub: DurableObjectStub = env.COUNTER.getByName("a");
    expect(stub.name).toBe("a");
    expectTypeOf<ObjectNamespace<Counter>>().toExtend<DurableObjectNamespace>();
    expectTypeOf<ObjectStub<Counter>>().toExtend<DurableObjectStub>();
    // Methods are typed from the class.
    expectTypeOf(env.COUNTER.getByName("a").increment).toEqualTypeOf<(by: number) => Promise<number>>();
    expectTypeOf(env.PLAIN.getByName("a").ping).returns.toEqualTypeOf<Promise<string>>();
    // @ts-expect-error no such method
    expect(typeof env.PLAIN.getByName("a").pong).toBe("function");
  });

  test("with the platform's type argument: an env typed { NS: DurableObjectNamespace<Tally> } accepts the host's", async () => {
    class Tally extends DurableObject {
      async add(by: number): Promise<number> {
        const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + by;
        await this.ctx.storage.put("n", n);
        return n;
      }
      reset(): void {}
    }
    interface PlatformEnv {
      TALLY: DurableObjectNamespace<Tally>;
    }
    expectTypeOf<ObjectStub<Tally>>().toExtend<DurableObjectStub<Tally>>();
    expectTypeOf<ObjectNamespace<Tally>>().toExtend<DurableObjectNamespace<Tally>>();
    const host = new ObjectHost({ namespaces: { TALLY: Tally }, clock: new FakeClock() });
    const env: PlatformEnv = host.env;
    const stub: DurableObjectStub<Tally> = env.TALLY.getByName("a");
    expect(await stub.add(2)).toBe(2);
    expect("__DURABLE_OBJECT_BRAND" in stub).toBe(false);
    await host.close();
  });
});
