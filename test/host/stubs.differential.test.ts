/**
 * The namespace and stub rules against real workerd (Miniflare 4): the same scenario runs in a
 * Worker against `env.C`/`env.O` and in Node against an ObjectHost, and each step's outcome (value,
 * or error class, name, message and the platform's marks `remote`, `durableObjectReset`, `retryable`,
 * `overloaded`) must match.
 */
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { HostedClass } from "../../src/host/host-types";
import { ObjectHost } from "../../src/host/object-host";
import { FakeClock } from "../../src/util/clock";
import { ensureWorkerdExecutable } from "../differential/workerd";

/**
 * The scenario, as a self-contained function (its source is embedded in the Worker). `env` has two
 * namespaces of the same class, `C` and `O`.
 */
// biome-ignore lint/suspicious/noExplicitAny: the scenario runs untyped in the Worker too
async function scenario(env: Record<string, any>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const t = async (name: string, f: () => unknown) => {
    try {
      const v = await f();
      out[name] = { ok: true, v: typeof v === "object" && v !== null ? JSON.stringify(v) : String(v) };
      // biome-ignore lint/suspicious/noExplicitAny: anything may be thrown
    } catch (e: any) {
      out[name] = {
        ok: false,
        ctor: e?.constructor?.name,
        name: e?.name,
        message: e?.message,
        remote: e?.remote,
        reset: e?.durableObjectReset,
        retryable: e?.retryable,
        overloaded: e?.overloaded,
        // Only the marks are the error's own enumerable properties (e.extra stays behind).
        keys: e instanceof Error && !(e instanceof DOMException) ? Object.keys(e).sort() : undefined,
      };
    }
  };
  const id = env.C.idFromName("a");
  const s = env.C.get(id);
  const unused = env.C.get(id);
  await t("idShape", () => /^[0-9a-f]{64}$/.test(id.toString()) && id.name === "a" && s.name === "a");
  await t("scoped", () => env.O.idFromName("a").toString() !== id.toString());
  await t("crossNamespace", () => env.O.idFromString(id.toString()).toString());
  await t("notHex", () => env.C.idFromString("zz"));
  await t("notAString", () => env.C.idFromString(5));
  await t("foreignHex", () => env.C.idFromString("a".repeat(64)));
  await t("upperCase", () => env.C.idFromString(id.toString().toUpperCase()).toString() === id.toString());
  await t("parsedName", () => String(env.C.idFromString(id.toString()).name));
  await t("getNotId", () => env.C.get("abc"));
  await t("uniqueName", () => String(env.C.newUniqueId().name));
  await t("increment", () => s.increment(2));
  await t("missing", () => s.nope(1));
  await t("field", () => s.field());
  await t("boom", () => s.boom());
  // What the object throws arrives rebuilt, as the platform rebuilds it.
  for (const kind of [
    "string",
    "number",
    "object",
    "array",
    "instance",
    "null",
    "customName",
    "emptyName",
    "customNameNoMessage",
    "subclass",
    "aggregate",
    "evalError",
    "retryable",
    "overloaded",
    "retryableAndOverloaded",
    "retryableFalse",
    "resetMark",
    "domException",
  ]) {
    await t(`throw-${kind}`, () => s.throwKind(kind));
  }
  await t("fetchThrows", () => s.fetch("http://x/throw"));
  // A constructor that throws resets the object: the caller sees durableObjectReset (and remote,
  // for fetch).
  await t("ctorThrows", () => env.C.getByName("ctor-throws").increment(1));
  await t("ctorThrowsFetch", () => env.C.getByName("ctor-throws").fetch("http://x/"));
  // A thrown non-error resets the object the same way: the caller's Error says so.
  await t("ctorThrowsString", () => env.C.getByName("ctor-throws-string").increment(1));
  await t("ctorThrowsStringFetch", () => env.C.getByName("ctor-throws-string").fetch("http://x/"));
  await t("ctorThrowsObject", () => env.C.getByName("ctor-throws-object").increment(1));
  await t("symbolArg", () => s.echo(Symbol("x")));
  await t("classArg", () => {
    class K {
      x = 1;
    }
    return s.echo(new K());
  });
  await t("symbolResult", () => s.symbol());
  await t("dateEcho", async () => (await s.echo(new Date(5))) instanceof Date);
  await t("mutation", async () => {
    const o = { a: 1 };
    const r = await s.mutate(o);
    return [o, r];
  });
  await t("getter", async () => await s.answer);
  await t("thenable", () => typeof s.then);
  await t("fetch", async () => (await s.fetch("http://x/p")).text());
  await t("abort", () => s.abortMe("custom reason"));
  await t("sameStubAfter", () => s.increment(1));
  await t("sameStubFetchAfter", async () => (await s.fetch("http://x/p")).text());
  await t("unusedStubAfter", () => unused.increment(1));
  await t("newStubAfter", () => env.C.get(id).increment(1));
  await t("byName", () => env.C.getByName("bn").whoAmI());
  // Arguments convert as the platform's bindings convert them.
  await t("nameMissing", () => env.C.idFromName());
  await t("nameSymbol", () => env.C.idFromName(Symbol("s")));
  await t("nameUndefined", () => env.C.idFromName(undefined).name);
  await t("nameNumber", () => env.C.idFromName(5).equals(env.C.idFromName("5")));
  await t("byNameMissing", () => env.C.getByName());
  await t("byNameSymbol", () => env.C.getByName(Symbol("s")));
  await t("byNameBadOptions", () => env.C.getByName("x", 5));
  await t("getBadOptions", () => env.C.get(id, 5));
  await t("stringMissing", () => env.C.idFromString());
  await t("stringSymbol", () => env.C.idFromString(Symbol("s")));
  await t("stringObject", () => env.C.idFromString({ toString: () => id.toString() }).equals(id));
  await t("uniqueNumber", () => env.C.newUniqueId(5));
  await t("uniqueString", () => env.C.newUniqueId("x"));
  await t("uniqueNull", () => typeof env.C.newUniqueId(null).toString());
  // Names that differ only in a lone surrogate are two names.
  await t("loneSurrogate", () => env.C.idFromName("\uD800").equals(env.C.idFromName("\uFFFD")));
  await t("loneSurrogateInside", () => env.C.idFromName("a\uDC00b").equals(env.C.idFromName("a\uFFFDb")));
  await t("surrogatePair", () => env.C.idFromName("\uD83D\uDE00").equals(env.C.idFromName("\u{1F600}")));
  // A stub takes other properties, but not its id or name.
  await t("stubKeys", () => Object.keys(env.C.get(id)));
  await t("stubSet", () => {
    const stub = env.C.get(id);
    stub.extra = 1;
    stub.fetch = 2;
    return [stub.extra, stub.fetch];
  });
  await t("stubSetId", () => {
    env.C.get(id).id = 1;
  });
  // The platform's event handlers are not RPC methods; a property the class does not have is not one
  // either. (A fresh stub: `s` was bound to the instance that abortMe reset.)
  const fresh = env.C.get(id);
  await t("alarmOverRpc", () => fresh.alarm());
  await t("webSocketMessageOverRpc", () => fresh.webSocketMessage(null, "x"));
  await t("awaitAlarm", async () => typeof (await fresh.alarm));
  await t("awaitMissing", async () => await fresh.nope);
  await t("awaitField", async () => await fresh.field);
  await t("awaitCtx", async () => typeof (await fresh.ctx));
  await t("freshStubWorks", () => fresh.increment(1));
  await t("stubSetName", () => {
    env.C.get(id).name = "b";
  });
  return out;
}

const CLASS_SOURCE = `
  constructor(ctx, env) {
    super(ctx, env);
    if (ctx.id.name === "ctor-throws") throw new RangeError("constructor failed");
    if (ctx.id.name === "ctor-throws-string") throw "constructor failed";
    if (ctx.id.name === "ctor-throws-object") throw { why: "constructor failed" };
  }
  throwKind(kind) {
    class K {}
    class Sub extends Error {}
    const named = (name, message) => { const e = new Error(message); e.name = name; return e; };
    const marked = (marks) => Object.assign(new TypeError("marked"), marks);
    switch (kind) {
      case "string": throw "plain";
      case "number": throw 42;
      case "object": throw { a: 1 };
      case "array": throw [1, 2];
      case "instance": throw new K();
      case "null": throw null;
      case "customName": throw named("MyError", "mine");
      case "emptyName": throw named("", "nameless");
      case "customNameNoMessage": throw named("MyError", "");
      case "subclass": throw new Sub("sub");
      case "aggregate": throw new AggregateError([new Error("x")], "several");
      case "evalError": throw new EvalError("ev");
      case "retryable": throw marked({ retryable: "yes" });
      case "overloaded": throw marked({ overloaded: 1 });
      case "retryableAndOverloaded": throw marked({ retryable: true, overloaded: true });
      case "retryableFalse": throw marked({ retryable: false, remote: false });
      case "resetMark": throw marked({ durableObjectReset: true });
      case "domException": throw new DOMException("dom", "AbortError");
    }
  }
  async increment(n) { const v = ((await this.ctx.storage.get("n")) ?? 0) + n; await this.ctx.storage.put("n", v); return v; }
  boom() { const e = new RangeError("bad thing"); e.extra = 5; throw e; }
  symbol() { return Symbol("q"); }
  echo(x) { return x; }
  mutate(o) { o.changed = true; return o; }
  abortMe(reason) { this.ctx.abort(reason); }
  get answer() { return 42; }
  field = 7;
  whoAmI() { return { name: this.ctx.id.name ?? null }; }
  async alarm() { return "alarm ran"; }
  webSocketMessage() { return "webSocketMessage ran"; }
  async fetch(request) {
    if (new URL(request.url).pathname === "/throw") throw new SyntaxError("fetch failed");
    return new Response("fetched " + new URL(request.url).pathname);
  }
`;

// The same class for Node (the Worker gets CLASS_SOURCE inside `class ... extends DurableObject`).
const NodeClass = new Function("base", `return class Scenario extends base { ${CLASS_SOURCE} }`)(
  class {
    ctx: unknown;
    constructor(ctx: unknown, _env?: unknown) {
      this.ctx = ctx;
    }
  },
) as HostedClass;

let mf: Miniflare;
beforeAll(async () => {
  ensureWorkerdExecutable();
  const source = scenario.toString();
  if (/__vite_ssr_|__vi_import|import\.meta/.test(source)) throw new Error("the scenario must stay self-contained");
  const script = `
import { DurableObject } from "cloudflare:workers";
// esbuild's keepNames helper, in case the test transform inserted calls to it.
const __name = (target) => target;
export class Scenario extends DurableObject { ${CLASS_SOURCE} }
// A second class, so that its ids differ (workerd keys a namespace by its class).
export class Other extends Scenario {}
const scenario = ${source};
export default { async fetch(request, env) { return Response.json(await scenario(env)); } };`;
  mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: "2026-02-23",
    durableObjects: { C: { className: "Scenario", useSQLite: true }, O: { className: "Other", useSQLite: true } },
  });
}, 60_000);
afterAll(async () => {
  await mf?.dispose();
});

describe("stubs against workerd", () => {
  test("every step has the same outcome (value, or error class and message)", async () => {
    const response = await mf.dispatchFetch("http://x/");
    const workerd = (await response.json()) as Record<string, unknown>;
    const host = new ObjectHost({ namespaces: { C: NodeClass, O: NodeClass }, clock: new FakeClock() });
    const ours = JSON.parse(JSON.stringify(await scenario(host.env as unknown as Record<string, unknown>)));
    await host.close();
    expect(Object.keys(ours)).toEqual(Object.keys(workerd));
    for (const key of Object.keys(workerd)) expect({ [key]: ours[key] }).toEqual({ [key]: workerd[key] });
  }, 60_000);
});
