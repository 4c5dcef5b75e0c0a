/**
 * Differential tests of how the key-value calls take their arguments, which the random suites do not
 * generate: options objects with getters, Proxies and inherited members, key arrays with holes,
 * Proxies of arrays, functions as entries, the order in which arguments are converted, and what a
 * refused call leaves behind. One class, the same source text, in real workerd (Miniflare) and in an
 * ObjectContext. Unit tests of the same: test/storage/kv/call-arguments.test.ts.
 */
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import { classFromSource, type Outcome, objectWorker, ourSide, startMiniflare, workerdSide } from "./same-source";
import { DEFAULT_COMPATIBILITY_DATE } from "./workerd";

const KV_ARGUMENTS_SOURCE = `
class KvArguments {
  constructor(ctx, env) {
    this.ctx = ctx;
  }

  async fetch(request) {
    // A call's outcome; a synchronous throw counts as a rejection (see the delete() test below).
    const outcome = async (f) => {
      try {
        const value = await f();
        return { value: value instanceof Map ? Object.fromEntries(value) : value === undefined ? "(undefined)" : value };
      } catch (e) {
        return { error: e.constructor.name, message: e.message };
      }
    };
    const recorder = () => {
      const reads = [];
      const options = new Proxy({}, { get: (_t, name) => { reads.push(String(name)); return undefined; } });
      return { options, reads };
    };
    const readsOf = async (call) => {
      const { options, reads } = recorder();
      await outcome(() => call(options));
      return reads;
    };
    const throwing = (name) => Object.defineProperty({}, name, { get() { throw new Error("read " + name); }, enumerable: true });
    const later = Date.now() + 86400000;
    const storage = this.ctx.storage;
    const out = {};
    switch (new URL(request.url).pathname) {
      case "/member-order": {
        out.get = await readsOf((o) => storage.get("a", o));
        out.getMany = await readsOf((o) => storage.get(["a"], o));
        out.put = await readsOf((o) => storage.put("a", 1, o));
        out.putEntries = await readsOf((o) => storage.put({ a: 1 }, o));
        out.delete = await readsOf((o) => storage.delete("a", o));
        out.deleteAll = await readsOf((o) => storage.deleteAll(o));
        out.list = await readsOf((o) => storage.list(o));
        out.getAlarm = await readsOf((o) => storage.getAlarm(o));
        out.setAlarm = await readsOf((o) => storage.setAlarm(later, o));
        out.deleteAlarm = await readsOf((o) => storage.deleteAlarm(o));
        out.transaction = await readsOf((o) => storage.transaction(async () => 1, o));
        out.kvList = await readsOf((o) => [...storage.kv.list(o)]);
        await storage.transaction(async (txn) => {
          out.txnGet = await readsOf((o) => txn.get("a", o));
          out.txnPut = await readsOf((o) => txn.put("a", 1, o));
          out.txnDelete = await readsOf((o) => txn.delete("a", o));
          out.txnList = await readsOf((o) => txn.list(o));
          out.txnSetAlarm = await readsOf((o) => txn.setAlarm(later, o));
          txn.rollback();
        });
        return Response.json(out);
      }
      case "/throwing-members": {
        await storage.put({ a: 1, b: 2 });
        out.deleteAll = await outcome(() => storage.deleteAll(throwing("allowUnconfirmed")));
        out.put = await outcome(() => storage.put("c", 3, throwing("allowConcurrency")));
        out.putEntries = await outcome(() => storage.put({ d: 4 }, throwing("noCache")));
        out.putParameter3 = await outcome(() => storage.put({ e: 5 }, {}, throwing("noCache")));
        out.delete = await outcome(() => storage.delete("a", throwing("allowConcurrency")));
        out.get = await outcome(() => storage.get("a", throwing("allowConcurrency")));
        out.list = await outcome(() => storage.list(throwing("limit")));
        out.getAlarm = await outcome(() => storage.getAlarm(throwing("allowConcurrency")));
        out.setAlarm = await outcome(() => storage.setAlarm(later, throwing("allowUnconfirmed")));
        out.transactionOptions = await outcome(() => storage.transaction(async () => 1, throwing("lowPriority")));
        await storage.transaction(async (txn) => {
          out.txnPut = await outcome(() => txn.put("f", 6, throwing("noCache")));
          out.txnDelete = await outcome(() => txn.delete("b", throwing("allowUnconfirmed")));
        });
        out.left = await outcome(() => storage.list());
        out.alarm = await outcome(() => storage.getAlarm());
        return Response.json(out);
      }
      case "/conversion-order": {
        const key = { toString() { throw new Error("key"); } };
        const order = [];
        const logged = (name) => ({ get noCache() { order.push(name); return false; } });
        const entries = { get x() { order.push("entry"); return 9; } };
        out.keyBeforeOptions = await outcome(() => storage.get(key, throwing("noCache")));
        out.keysBeforeOptions = await outcome(() => storage.get(["a", key], throwing("noCache")));
        out.keysBeforeCount = await outcome(() => storage.get([...new Array(200).fill("a"), Symbol()]));
        out.optionsBeforeUndefinedValue = await outcome(() => storage.put("a", undefined, throwing("noCache")));
        out.objectKeyIsEntries = await outcome(() => storage.put(key, 1, throwing("noCache")));
        out.entriesThenParameter3ThenParameter2 = await outcome(() => storage.put(entries, logged("2"), logged("3")));
        out.order = order;
        out.listOnce = await outcome(() => {
          let reads = 0;
          return storage.list({ get start() { reads++; return reads === 1 ? "x" : "zzz"; } });
        });
        out.inherited = await outcome(() => storage.list(Object.create({ limit: 1, reverse: true })));
        return Response.json(out);
      }
      case "/transaction-options": {
        const run = (options) => outcome(() => storage.transaction(async () => "ran", options));
        for (const [name, value] of [
          ["number", 5], ["date", new Date(5)], ["string", "2020-01-01"], ["nan", NaN], ["invalidDate", new Date(NaN)],
          ["null", null], ["bigint", 1n], ["after2189", 1e20], ["before1687", -1e20], ["valueOf", { valueOf: () => 5 }],
        ]) out[name] = await run({ asOfTime: value });
        out.lowPriority = await run({ lowPriority: "yes" });
        return Response.json(out);
      }
      case "/keys": {
        await storage.put({ a: 1, undefined: 2, c: 3, d: 4, "x,y": 5 });
        out.getHole = await outcome(() => storage.get(["a", , "zz"]));
        out.getOnlyHole = await outcome(() => storage.get([,]));
        out.deleteHole = await outcome(() => storage.delete(["zz", , "c"]));
        out.proxyArray = await outcome(() => storage.get(new Proxy(["a"], {})));
        out.proxyArrayOfTwo = await outcome(() => storage.get(new Proxy(["x", "y"], {})));
        out.deleteProxyArray = await outcome(() => storage.delete(new Proxy(["d"], {})));
        out.functionEntries = await outcome(() => storage.put(Object.assign(() => 0, { fromFunction: 7 })));
        out.functionKey = await outcome(() => storage.put(() => 0, 1));
        out.arrayKey = await outcome(() => storage.put(["p", "q"], 8));
        out.left = await outcome(() => storage.list());
        return Response.json(out);
      }
      case "/platform-objects": {
        // The web platform's objects workerd refuses to store, and a view of a SharedArrayBuffer.
        const make = {
          url: () => new URL("http://example.com/"),
          urlInMap: () => new Map([["u", new URL("http://example.com/")]]),
          urlSubclass: () => new (class MyURL extends URL {})("http://example.com/"),
          blob: () => new Blob(["x"]),
          file: () => new File(["x"], "f"),
          searchParams: () => new URLSearchParams("a=1"),
          formData: () => new FormData(),
          abortController: () => new AbortController(),
          abortSignal: () => AbortSignal.abort(),
          textEncoder: () => new TextEncoder(),
          readableStream: () => new ReadableStream(),
          writableStream: () => new WritableStream(),
          transformStream: () => new TransformStream(),
          textEncoderStream: () => new TextEncoderStream(),
          compressionStream: () => new CompressionStream("gzip"),
          event: () => new Event("x"),
          eventTarget: () => new EventTarget(),
          messageChannel: () => new MessageChannel(),
          responseWithBody: () => new Response("x"),
          requestWithBody: () => new Request("http://example.com/", { method: "POST", body: "x" }),
          // A Request's signal is written with it, and refused; one made without is stored.
          requestWithSignal: () => new Request("http://example.com/", { signal: new AbortController().signal }),
          requestWithAbortedSignal: () => new Request("http://example.com/", { signal: AbortSignal.abort() }),
          requestClone: () => new Request("http://example.com/").clone(),
          requestFromRequestWithoutSignal: () => new Request(new Request("http://example.com/"), { signal: null }),
          subtle: () => crypto.subtle,
          claimsBrand: () => ({ [Symbol.toStringTag]: "URL", a: 1 }),
        };
        for (const [name, f] of Object.entries(make)) out[name] = await outcome(() => storage.put(name, f()));
        out.left = await outcome(async () => [...(await storage.list()).keys()]);
        return Response.json(out);
      }
      case "/dom-exception": {
        await storage.put("e", { e: new DOMException("gone", "NotFoundError") });
        const back = (await storage.get("e")).e;
        return Response.json({ isDOMException: back instanceof DOMException, name: back.name, message: back.message, code: back.code });
      }
      case "/web-objects": {
        // What reads back of the fetch API's objects: only what both runtimes construct alike.
        const h = () => new Headers([["B-Two", "2"], ["a-one", "1"], ["Set-Cookie", "c=1"], ["set-cookie", "d=2"], ["X-Dup", "x"], ["x-dup", "y"]]);
        const shared = h();
        await storage.put("v", {
          headers: shared,
          again: shared,
          request: new Request("http://example.com/p?q=1#frag", { method: "put", headers: h(), redirect: "manual", cache: "no-store" }),
          plainRequest: new Request("https://example.com"),
          response: new Response(null, { status: 404, statusText: "Nope", headers: h() }),
          redirect: Response.redirect("http://example.com/x", 302),
          error: Response.error(),
          immutable: Response.redirect("http://example.com/y", 301).headers,
        });
        const v = await storage.get("v");
        const kind = (x) => [x instanceof Headers, x instanceof Request, x instanceof Response];
        out.headers = { kind: kind(v.headers), entries: [...v.headers], cookies: v.headers.getSetCookie(), shared: v.headers === v.again };
        out.request = { kind: kind(v.request), url: v.request.url, method: v.request.method, redirect: v.request.redirect, cache: v.request.cache, body: v.request.body, headers: [...v.request.headers] };
        out.plainRequest = { url: v.plainRequest.url, method: v.plainRequest.method, redirect: v.plainRequest.redirect, headers: [...v.plainRequest.headers] };
        out.response = { kind: kind(v.response), status: v.response.status, statusText: v.response.statusText, body: v.response.body, headers: [...v.response.headers] };
        out.redirect = { status: v.redirect.status, headers: [...v.redirect.headers] };
        out.error = { type: v.error.type, status: v.error.status };
        const change = (f) => {
          try {
            f();
            return "changed";
          } catch (e) {
            return e.constructor.name;
          }
        };
        out.immutable = { entries: [...v.immutable], set: change(() => v.immutable.set("x", "1")), append: change(() => v.immutable.append("x", "1")), delete: change(() => v.immutable.delete("location")), left: [...v.immutable] };
        out.mutable = change(() => v.headers.set("x", "1"));
        return Response.json(out);
      }
      case "/delete-throws": {
        const kind = (f) => {
          try {
            const p = f();
            p.catch(() => {});
            return "returned a promise";
          } catch (e) {
            return "threw " + e.constructor.name;
          }
        };
        out.delete = kind(() => storage.delete(Symbol()));
        await storage.transaction(async (txn) => {
          out.txnDelete = kind(() => txn.delete(Symbol()));
          out.txnDeleteAll = kind(() => txn.deleteAll());
        });
        return Response.json(out);
      }
    }
    return new Response("no such path", { status: 404 });
  }

  alarm() {}
}
`;

const KvArguments = classFromSource(KV_ARGUMENTS_SOURCE, "KvArguments");

let mf: Miniflare | undefined;

beforeAll(async () => {
  mf = await startMiniflare([
    objectWorker("kv-arguments", KV_ARGUMENTS_SOURCE, "KvArguments", DEFAULT_COMPATIBILITY_DATE),
  ]);
});

afterAll(async () => {
  await mf?.dispose();
});

async function both(path: string): Promise<{ workerd: Record<string, unknown>; ours: Record<string, unknown> }> {
  if (mf === undefined) throw new Error("Miniflare did not start");
  const context = await ObjectContext.create(KvArguments, { id: randomUUID() });
  try {
    const workerd = await (await workerdSide(mf, "kv-arguments", randomUUID())).request(path);
    const ours = await ourSide(context).request(path);
    return { workerd: body(workerd), ours: body(ours) };
  } finally {
    await context.close();
  }
}

function body(outcome: Outcome): Record<string, unknown> {
  if (!outcome.ok) throw new Error(`request failed: ${outcome.name}: ${outcome.error}`);
  return outcome.body as Record<string, unknown>;
}

describe("key-value arguments, compared with workerd", () => {
  it("options members are read once each, in the platform's order, by every call (storage, txn, kv, transaction)", async () => {
    const { workerd, ours } = await both("/member-order");
    expect(workerd.list).toEqual([
      "start",
      "startAfter",
      "end",
      "prefix",
      "reverse",
      "limit",
      "allowConcurrency",
      "noCache",
    ]);
    expect(ours).toEqual(workerd);
  });

  it("a throwing options getter refuses the call with its error, and nothing takes effect", async () => {
    const { workerd, ours } = await both("/throwing-members");
    expect(workerd.left).toEqual({ value: { a: 1, b: 2 } });
    expect(workerd.alarm).toEqual({ value: null });
    expect(ours).toEqual(workerd);
  });

  it("arguments convert in the platform's order: keys, options (parameter 3 before 2), then the call's own checks", async () => {
    const { workerd, ours } = await both("/conversion-order");
    expect(workerd.order).toEqual(["entry", "3", "2"]);
    expect(ours).toEqual(workerd);
  });

  it("transaction() options: asOfTime and lowPriority convert with the platform's errors", async () => {
    const { workerd, ours } = await both("/transaction-options");
    expect(workerd.number).toEqual({ value: "ran" });
    expect(ours).toEqual(workerd);
  });

  it("key arrays: holes read as 'undefined', a Proxy of an array is one key; a function is an entries object", async () => {
    const { workerd, ours } = await both("/keys");
    expect(workerd.getHole).toEqual({ value: { a: 1, undefined: 2 } });
    expect(ours).toEqual(workerd);
  });

  it("the web platform's objects workerd refuses are refused with its DataCloneError, not stored as {}", async () => {
    const { workerd, ours } = await both("/platform-objects");
    expect(workerd.url).toEqual({
      error: "DOMException",
      message: 'Could not serialize object of type "URL". This type does not support serialization.',
    });
    expect(workerd.requestWithSignal).toEqual({
      error: "DOMException",
      message: "AbortSignal serialization is not enabled.",
    });
    expect(ours).toEqual(workerd);
  });

  it("a DOMException reads back as one", async () => {
    const { workerd, ours } = await both("/dom-exception");
    expect(workerd).toEqual({ isDOMException: true, name: "NotFoundError", message: "gone", code: 8 });
    expect(ours).toEqual(workerd);
  });

  it("Headers and bodyless Requests and Responses read back as themselves, with their entries, URL, method, status", async () => {
    const { workerd, ours } = await both("/web-objects");
    expect(workerd.headers).toEqual({
      kind: [true, false, false],
      entries: [
        ["a-one", "1"],
        ["b-two", "2"],
        ["set-cookie", "c=1"],
        ["set-cookie", "d=2"],
        ["x-dup", "x, y"],
      ],
      cookies: ["c=1", "d=2"],
      shared: true,
    });
    expect(workerd.error).toEqual({ type: "error", status: 0 });
    expect(workerd.immutable).toEqual({
      entries: [["location", "http://example.com/y"]],
      set: "TypeError",
      append: "TypeError",
      delete: "TypeError",
      left: [["location", "http://example.com/y"]],
    });
    expect(workerd.mutable).toBe("changed");
    expect(ours).toEqual(workerd);
  });

  it("delete() and txn.deleteAll() refuse by rejecting (the storage interface: calls return promises), where workerd throws", async () => {
    // A known difference (docs/semantics.md, "Where we differ"): workerd's delete() and the
    // transaction's deleteAll() throw their errors synchronously; the storage interface has every
    // call return a promise, and actorstore keeps to that.
    const { workerd, ours } = await both("/delete-throws");
    expect(workerd).toEqual({ delete: "threw TypeError", txnDelete: "threw TypeError", txnDeleteAll: "threw Error" });
    expect(ours).toEqual({
      delete: "returned a promise",
      txnDelete: "returned a promise",
      txnDeleteAll: "returned a promise",
    });
  });
});
