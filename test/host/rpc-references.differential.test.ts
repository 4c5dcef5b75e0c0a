/**
 * Functions and RpcTargets passed by reference, and promise pipelining, against real workerd
 * (Miniflare 4): the same scenario runs in a Worker against `env.C` and in Node against an
 * ObjectHost, and each step's outcome (value, or error class, message and `remote`) must match.
 */
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { RpcTarget } from "../../src/context/rpc-target";
import type { HostedClass } from "../../src/host/host-types";
import { ObjectHost } from "../../src/host/object-host";
import { FakeClock } from "../../src/util/clock";
import { ensureWorkerdExecutable } from "../differential/workerd";

/** The scenario, self-contained (its source is embedded in the Worker). */
// biome-ignore lint/suspicious/noExplicitAny: the scenario runs untyped in the Worker too
async function scenario(env: Record<string, any>, Target: any): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const t = async (name: string, f: () => unknown) => {
    try {
      const v = await f();
      out[name] = { ok: true, v: typeof v === "object" && v !== null ? JSON.stringify(v) : String(v) };
      // biome-ignore lint/suspicious/noExplicitAny: anything may be thrown
    } catch (e: any) {
      out[name] = { ok: false, ctor: e?.constructor?.name, message: e?.message, remote: e?.remote };
    }
  };
  const s = env.C.getByName("a");
  const tag = (v: unknown) => Object.prototype.toString.call(v);
  // Pipelining on the promise of a call.
  await t("promiseShape", () => {
    const p = s.getObj();
    return [typeof p, typeof p.then, p instanceof Promise, tag(p)].join();
  });
  await t("pipelineRead", () => s.getObj().a);
  await t("pipelineNested", () => s.getObj().nested.b);
  await t("pipelineDeep", () => s.getObj().nested.deeper.c);
  await t("pipelineMissing", () => s.getObj().zzz);
  await t("pipelineOnNumber", () => s.getNum().foo);
  await t("pipelineCallOnNumber", () => s.getNum().foo());
  await t("pipelineCallFn", () => s.getObj().fn(5));
  await t("pipelineNotAFunction", () => s.getObj().a());
  await t("pipelineNestedNotAFunction", () => s.getObj().nested.b());
  await t("pipelineIndex", () => s.getArr()[1]);
  await t("propertyShape", () => {
    const p = s.getObj().a;
    return [typeof p, tag(p), typeof p.then, String(p)].join();
  });
  await t("memberShape", () => [typeof s.getObj, tag(s.getObj)].join());
  await t("getterThenRead", () => s.obj.a);
  await t("getterThenCall", () => s.obj.fn(2));
  // A result object gets a disposer; its functions arrive as stubs.
  await t("resultShape", async () => {
    const r = await s.getObj();
    const d = Object.getOwnPropertyDescriptor(r, Symbol.dispose);
    return [
      Object.keys(r).join(),
      typeof r.fn,
      Object.getOwnPropertySymbols(r).length,
      d?.enumerable,
      d?.writable,
    ].join("|");
  });
  await t("arrayResultDisposer", async () => {
    const r = await s.getArr();
    return [Array.isArray(r), Symbol.dispose in r].join();
  });
  await t("dateResultDisposer", async () => Symbol.dispose in (await s.echo(new Date(1))));
  await t("resultFnCall", async () => (await s.getObj()).fn(4));
  await t("resultFnShape", async () => {
    const f = (await s.getObj()).fn;
    return [typeof f, String(f.name), tag(f), Object.keys(f).length, typeof f.then, f.constructor?.name, "x" in f].join(
      "|",
    );
  });
  await t("resultFnCallMethod", async () => (await s.getFn()).call({ x: 1 }, 3));
  // Functions passed as arguments.
  await t("callbackArg", () => s.callBack((x: number) => x * 10));
  await t("callbackShape", () => s.describe((x: number) => x));
  await t("callbackInObject", () => s.callNested({ cb: (x: number) => x + 1 }));
  await t("callbackThrows", () =>
    s.callBack(() => {
      throw new RangeError("cb failed");
    }),
  );
  await t("callbackCallsBack", () => s.callBack(async (x: number) => x + (await s.getNum())));
  await t("callbackReturnsObject", () => s.callBackObj(() => ({ a: 1, f: () => 2 })));
  await t("callbackKeptIsDisposed", async () => {
    await s.store((x: number) => x + 100);
    return s.useStored(1);
  });
  await t("callbackKeptDup", async () => {
    await s.storeDup((x: number) => x + 100);
    return s.useStored(1);
  });
  await t("callbackLaterInCall", () => s.laterCall((x: number) => x * 3));
  await t("callbackInArray", async () => {
    const r = await s.echo([() => 5]);
    return [typeof r[0], await r[0]()].join();
  });
  await t("callbackEchoed", async () => {
    const f = (x: number) => x;
    const g = await s.echo(f);
    return [typeof g, g === f, await g(7)].join();
  });
  // RpcTargets.
  await t("target", async () => {
    const c = await s.getCounter();
    return [await c.inc(), await c.inc(), await c.value].join();
  });
  await t("targetShape", async () => {
    const c = await s.getCounter();
    return [typeof c, tag(c), Object.keys(c).join(), typeof c.then, c.constructor?.name, typeof c.dup].join("|");
  });
  await t("targetField", async () => (await s.getCounter()).field);
  await t("targetFieldCall", async () => (await s.getCounter()).field());
  await t("targetMissing", async () => (await s.getCounter()).missing());
  await t("targetCalled", async () => (await s.getCounter())());
  await t("targetIndexMember", async () => (await s.getCounter())[0]());
  await t("targetIndexMemberType", async () => typeof (await s.getCounter())[0]);
  await t("targetGetterObject", async () => (await s.getCounter()).info.x);
  await t("targetPipelined", () => s.getCounter().inc());
  await t("targetPipelinedValue", () => s.getCounter().value);
  await t("targetArg", () => {
    class T extends Target {
      hi(x: string) {
        return `hi ${x}`;
      }
    }
    return s.useTarget(new T());
  });
  await t("targetEchoed", async () => {
    const c = await s.getCounter();
    const c2 = await s.echo(c);
    return [c2 === c, await c2.inc()].join();
  });
  // A Proxy passes by reference when its prototype chain says plain object or RpcTarget.
  await t("proxyResult", async () => {
    const r = await s.proxyObj();
    return [typeof r, tag(r), await r.a, await r.f()].join();
  });
  await t("proxyResultMissing", async () => (await s.proxyObj()).zz);
  await t("proxyResultPipelined", () => s.proxyObj().a);
  await t("proxyArrayResult", () => s.proxyArr());
  await t("proxyTargetResult", async () => (await s.proxyTarget()).inc());
  await t("proxyArg", () => s.describe(new Proxy({ a: 1 }, {})));
  await t("proxyArrayArg", () => s.describe(new Proxy([1], {})));
  await t("proxyNullPrototypeArg", () => s.describe(new Proxy(Object.create(null), {})));
  const revoked = (target: object) => {
    const r = Proxy.revocable(target, {});
    r.revoke();
    return r.proxy;
  };
  await t("revokedProxyArg", () => s.describe(revoked({ a: 1 })));
  await t("revokedProxyArgNested", () => s.describe({ x: revoked({ a: 1 }) }));
  await t("revokedFunctionProxyArg", () => s.describe(revoked(() => 1)));
  // One returned: workerd's first check of a method's (or getter's) value is a 'has'; an async method's
  // promise resolves first ('get' of its then); one inside the result is refused as an argument's is.
  await t("revokedProxyResult", () => s.revoked("object"));
  await t("revokedFunctionProxyResult", () => s.revoked("function"));
  await t("revokedProxyGetter", () => s.revokedGetter);
  await t("revokedProxyAsyncResult", () => s.revokedAsync());
  await t("revokedProxyNestedResult", () => s.revoked("nested"));
  await t("revokedProxyFromCallback", async () => (await s.getFn2())());
  // Passed from inside blockConcurrencyWhile, called back while the section waits for the call.
  await t("callbackInSection", () => s.callBackInSection());
  // Disposal.
  await t("disposedTarget", async () => {
    const c = await s.getCounter();
    c[Symbol.dispose]();
    return c.inc();
  });
  await t("disposedResult", async () => {
    const r = await s.getObj();
    const fn = r.fn;
    r[Symbol.dispose]();
    return fn(1);
  });
  await t("disposedFn", async () => {
    const f = await s.getFn();
    f[Symbol.dispose]();
    return f(1);
  });
  await t("dupOutlivesDispose", async () => {
    const f = await s.getFn();
    const g = f.dup();
    f[Symbol.dispose]();
    return [g === f, await g(1)].join();
  });
  await t("dupOfDisposed", async () => {
    const f = await s.getFn();
    f[Symbol.dispose]();
    let g: (x: number) => Promise<unknown>;
    try {
      g = f.dup();
    } catch (e) {
      return `dup() threw ${(e as Error).message}`;
    }
    try {
      return `called: ${await g(1)}`;
    } catch (e) {
      return `the call threw ${(e as Error).message}`;
    }
  });
  await t("disposedPassedOn", async () => {
    const f = await s.getFn();
    f[Symbol.dispose]();
    return s.tryCall(f);
  });
  await t("disposedPassedOnInObject", async () => {
    const f = await s.getFn();
    f[Symbol.dispose]();
    return s.describe({ f });
  });
  await t("stubThrown", () => s.throwIt(() => 1));
  // JSON.stringify calls a stub's toJSON (a call that fails) and leaves the stub out.
  await t("stubStringified", async () => JSON.stringify({ a: 1, f: await s.getFn(), o: await s.getObj() }));
  await t("stubToJSONAwaited", async () => (await s.getFn()).toJSON());
  await t("promiseDisposer", () => typeof s.getObj()[Symbol.dispose]);
  await t("numberPromiseDisposed", async () => {
    const p = s.getNum();
    p[Symbol.dispose]();
    return await p;
  });
  // Arrays cross as V8's serializer writes them: the elements they have (not their length) and
  // their other own properties; an own "__proto__" key stays an own property.
  await t("sparseArrayArg", () => {
    const a: unknown[] & { x?: number } = [];
    a.length = 2 ** 32 - 1;
    a[5] = 1;
    a.x = 2;
    return s.arrayShape(a);
  });
  await t("sparseArrayResult", async () => {
    const r = await s.sparse();
    return [r.length, Object.keys(r).join(), r.x].join("|");
  });
  await t("arrayOwnProperties", async () => {
    const r = await s.echo("xaby".match(/ab/));
    return [Object.keys(r).join(), r.index, r.input, r.groups].join("|");
  });
  await t("nullPrototypeArg", () => s.echo(Object.create(null)));
  await t("nullPrototypeNestedArg", () => s.echo({ a: Object.create(null) }));
  await t("nullPrototypeResult", () => s.nullProto());
  await t("arrayHoles", async () => {
    const holey = [1, 2, 3];
    delete holey[1];
    const r = await s.echo(holey);
    return [r.length, 1 in r].join();
  });
  await t("protoKeyArg", () => s.ownKeys(JSON.parse('{"__proto__": {"p": 1}, "b": 2}')));
  await t("protoKeyResult", async () => {
    const r = await s.protoKey();
    return [
      Object.keys(r).join(),
      Object.getPrototypeOf(r) === Object.prototype,
      r.p,
      Object.getOwnPropertyDescriptor(r, "__proto__")?.value?.p,
    ].join("|");
  });
  // Nesting too deep for the stack is V8's RangeError, on either side; both objects keep working.
  const nest = (n: number) => {
    let v: unknown = 0;
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  await t("nestedArg", () => s.depth(nest(1000)));
  await t("nestedResult", async () => {
    let v = await s.nested(1000);
    let d = 0;
    for (; Array.isArray(v); d++) v = v[0];
    return d;
  });
  await t("tooDeepArg", () => s.depth(nest(1_000_000)));
  await t("tooDeepResult", () => s.nested(1_000_000));
  await t("aliveAfterTooDeep", async () => [await s.getNum(), await env.C.getByName("other").getNum()].join());
  // What still cannot cross.
  await t("instanceResult", () => s.getInstance());
  await t("promiseArg", () => s.echo(Promise.resolve(3)));
  await t("weakMapArg", () => s.echo(new WeakMap()));
  await t("objectStubArg", () => s.describe(env.C.getByName("zz")));
  return out;
}

const CLASS_SOURCE = `
  get obj() { return { a: 5, fn: (x) => x * 7 }; }
  getObj() { return { a: 1, nested: { b: 2, deeper: { c: 3 } }, fn: (x) => x * 2 }; }
  getNum() { return 5; }
  getArr() { return [10, 20, 30]; }
  getFn() { return function named(y) { return y + 1; }; }
  async callBack(cb) { return await cb(3); }
  describe(cb) { return [typeof cb, Object.prototype.toString.call(cb), String(cb)].join("|"); }
  async callNested(o) { return await o.cb(1); }
  async callBackObj(cb) { const r = await cb(); return [Object.keys(r).join(), typeof r.f, await r.f()].join("|"); }
  store(cb) { this.cb = cb; }
  storeDup(cb) { this.cb = cb.dup(); }
  async useStored(x) { return await this.cb(x); }
  laterCall(cb) { return Promise.resolve().then(() => cb(2)); }
  getCounter() { return new Counter(); }
  async useTarget(t) { return [typeof t, await t.hi("there")].join("|"); }
  getInstance() { class K { x = 1 } return new K(); }
  echo(x) { return x; }
  async tryCall(f) { try { return await f(1); } catch (e) { return "threw " + e.message + " remote=" + e.remote; } }
  throwIt(x) { throw x; }
  arrayShape(a) { return [a.length, Object.keys(a).join(), a.x].join("|"); }
  sparse() { const a = []; a.length = 2 ** 32 - 1; a[5] = 1; a.x = 2; return a; }
  ownKeys(o) { return [Object.keys(o).join(), Object.getPrototypeOf(o) === Object.prototype, o.p].join("|"); }
  revoked(kind) {
    const r = Proxy.revocable(kind === "function" ? () => 1 : {}, {});
    r.revoke();
    return kind === "nested" ? { p: r.proxy } : r.proxy;
  }
  get revokedGetter() { return this.revoked("object"); }
  async revokedAsync() { return this.revoked("object"); }
  getFn2() { return () => this.revoked("object"); }
  nullProto() { return { a: Object.create(null) }; }
  protoKey() { return JSON.parse('{"__proto__": {"p": 1}, "b": 2}'); }
  depth(v) { let d = 0; for (; Array.isArray(v); d++) v = v[0]; return d; }
  nested(n) { let v = 0; for (let i = 0; i < n; i++) v = [v]; return v; }
  proxyObj() { return new Proxy({ a: 1, f() { return this.a + 1; } }, {}); }
  proxyArr() { return new Proxy([1], {}); }
  proxyTarget() { return new Proxy(new Counter(), {}); }
  async callBackInSection() {
    return await this.ctx.blockConcurrencyWhile(() => this.env.C.getByName("other").callBack((x) => x + 4));
  }
`;
const COUNTER_SOURCE = `class Counter extends RpcTarget {
  #n = 0;
  field = 9;
  inc() { return ++this.#n; }
  get value() { return this.#n; }
  get info() { return { x: 11 }; }
  [0]() { return "zero"; }
}`;

const NodeClass = new Function(
  "base",
  "RpcTarget",
  `${COUNTER_SOURCE}; return class C extends base { ${CLASS_SOURCE} }`,
)(
  class {
    ctx: unknown;
    env: unknown;
    constructor(ctx: unknown, env?: unknown) {
      this.ctx = ctx;
      this.env = env;
    }
  },
  RpcTarget,
) as HostedClass;

let mf: Miniflare;
beforeAll(async () => {
  ensureWorkerdExecutable();
  const source = scenario.toString();
  if (/__vite_ssr_|__vi_import|import\.meta/.test(source)) throw new Error("the scenario must stay self-contained");
  const script = `
import { DurableObject, RpcTarget } from "cloudflare:workers";
const __name = (target) => target;
${COUNTER_SOURCE}
export class C extends DurableObject { ${CLASS_SOURCE} }
const scenario = ${source};
export default { async fetch(request, env) { return Response.json(await scenario(env, RpcTarget)); } };`;
  mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: "2026-02-23",
    durableObjects: { C: { className: "C", useSQLite: true } },
  });
}, 60_000);
afterAll(async () => {
  await mf?.dispose();
});

describe("references and pipelining against workerd", () => {
  test("every step has the same outcome (value, or error class, message and remote)", async () => {
    const response = await mf.dispatchFetch("http://x/");
    const workerd = (await response.json()) as Record<string, unknown>;
    const host = new ObjectHost({ namespaces: { C: NodeClass }, clock: new FakeClock() });
    const ours = JSON.parse(JSON.stringify(await scenario(host.env as unknown as Record<string, unknown>, RpcTarget)));
    await host.close();
    expect(Object.keys(ours)).toEqual(Object.keys(workerd));
    const differ = Object.keys(workerd).filter((k) => JSON.stringify(ours[k]) !== JSON.stringify(workerd[k]));
    expect(differ.map((k) => ({ step: k, ours: ours[k], workerd: workerd[k] }))).toEqual([]);
  }, 60_000);
});
