/**
 * What the platform passes by reference across the boundary between a caller and an object, and its
 * promise pipelining.
 *
 * - A function or an {@link RpcTarget} in an argument or a result reaches the other side as a stub
 *   (a callable proxy): calling it, or a method of the target through it, runs the call where the
 *   function or target lives (for one the object made, as an event on the object, behind its input
 *   gate). Arguments and results of such calls cross the boundary again by the same rules.
 * - A stub received as an argument is disposed when the call that received it returns, unless the
 *   callee kept a `dup()` of it; an object result gets a `[Symbol.dispose]()` that disposes the stubs
 *   in it. A disposed stub fails with `Error: RPC stub used after being disposed.`
 * - The promise of a call is pipelined: `stub.make().name` reads `name` of the result, and
 *   `stub.make().run(1)` calls its method, without awaiting the first call first.
 *
 * The texts and shapes were checked against workerd (test/host/rpc-references.differential.test.ts).
 */
import { RpcTarget } from "../context/rpc-target";
import { type AsyncScope, loadAsyncScope } from "../util/async-scope";
import { cloneAcross, errorAcross, markCrossing, markDescription, NOT_A_REFERENCE } from "./boundary";

/** Where a reference's calls run: the side of the boundary that owns the function or target. */
export interface Side {
  /** Runs `thunk` on this side; what it throws reaches the other side as the boundary delivers it. */
  run(thunk: () => unknown): Promise<unknown>;
  /**
   * This side as a reference made now sees it: an object's side inside the critical sections
   * (`blockConcurrencyWhile`) running now, whose calls run inside them while they last.
   */
  pin?(): Side;
}

/** Which object's event the running code belongs to (its side), `null` outside every object. */
let running: AsyncScope<Side | null> | undefined;
let loadingScope: Promise<void> | undefined;

/**
 * Loads the async-context scope that tells an object's code from the code outside it (once per
 * process; without async context tracking, every caller is taken for code outside the objects).
 */
export function loadSideScope(): Promise<void> {
  loadingScope ??= loadAsyncScope<Side | null>().then((scope) => {
    running = scope;
  });
  return loadingScope;
}

/** Runs `fn` as code of `side` (an object's, in one of its events), or outside every object (`null`). */
export function runOnSide<R>(side: Side | null, fn: () => R): R {
  return running === undefined ? fn() : running.run(side, fn);
}

/** The caller's side of a stub: its functions run as plain calls (the caller has no gates here). */
export const CALLER_SIDE: Side = {
  run: (thunk) =>
    Promise.resolve()
      .then(() => runOnSide(null, thunk))
      .catch((e: unknown) => {
        throw errorAcross(e);
      }),
};

/**
 * The side of the code running now: an object's, when it runs in one of that object's events (a
 * function it passes is its own, called as an event on it), else the caller's.
 */
function currentSide(): Side {
  return running?.get() ?? CALLER_SIDE;
}

/** One stub's hold on a function or target of the other side. */
class Reference {
  disposed = false;
  constructor(
    readonly value: object,
    /** The side the value lives on: where calls run. */
    readonly owner: Side,
    /** The side that holds the stub: where the functions in a call's arguments live. */
    readonly holder: Side,
  ) {}
}

/** Each stub this module made, and the reference it holds. */
const STUBS = new WeakMap<object, Reference>();

/** The class a stub names as its constructor, as the platform's stubs do (`stub.constructor.name`). */
class RpcStub {}

/** The platform's error for a disposed stub. */
function disposedError(): Error {
  return new Error("RPC stub used after being disposed.");
}

/** The platform's text when a method is missing or is not a method. */
export function missingMethodMessage(name: string): string {
  return `The RPC receiver does not implement the method "${name}".`;
}

/** A prototype-chain member of `instance` (never an own field, never `Object.prototype`'s). */
export function findMember(instance: object, name: string): PropertyDescriptor | undefined {
  if (name === "constructor") return undefined;
  for (let p = Object.getPrototypeOf(instance) as object | null; p !== null && p !== Object.prototype; ) {
    const found = Object.getOwnPropertyDescriptor(p, name);
    if (found !== undefined) return found;
    p = Object.getPrototypeOf(p) as object | null;
  }
  return undefined;
}

/** A value cloned across, and the references made for it (disposed together). */
interface Crossed {
  readonly value: unknown;
  readonly references: Reference[];
}

/**
 * Clones `value` from side `from` to side `to`: functions and {@link RpcTarget}s (and stubs `from`
 * holds) become stubs whose calls run on the side that owns them; everything else is cloned as
 * {@link cloneAcross} clones it.
 */
function cross(value: unknown, from: Side, to: Side): Crossed {
  // What "the caller" passes belongs to the object whose event is running, if any; what is passed
  // from inside a critical section of that object is called inside it while it lasts.
  const side = from === CALLER_SIDE ? currentSide() : from;
  let pinned: Side | undefined;
  const references: Reference[] = [];
  const copy = cloneAcross(value, (v) => {
    const held = STUBS.get(v);
    if (held !== undefined) {
      // A stub passed on: the new stub calls the same owner directly. A disposed one passes as a
      // disposed stub (it fails when called), as on the platform, where the call it is passed in runs.
      const reference = new Reference(held.value, held.owner, to);
      reference.disposed = held.disposed;
      references.push(reference);
      return stubFor(reference);
    }
    if (isProxy(v)) refuseRevoked(v);
    if (typeof v === "function" || v instanceof RpcTarget || (isProxy(v) && emulatesReceiver(v))) {
      pinned ??= side.pin?.() ?? side;
      const reference = new Reference(v, pinned, to);
      references.push(reference);
      return stubFor(reference);
    }
    return NOT_A_REFERENCE;
  });
  return { value: copy, references };
}

/**
 * Node's `util.types.isProxy`, where the runtime lends it synchronously (`process.getBuiltinModule`);
 * elsewhere a Proxy is taken for the object it emulates.
 */
const nodeUtil = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.("node:util") as
  | {
      types?: { isProxy?: (v: unknown) => boolean };
      inspect?: (v: unknown, options: { showProxy: boolean; depth: number }) => string;
    }
  | undefined;
const isProxy: (value: object) => boolean = nodeUtil?.types?.isProxy ?? (() => false);

/**
 * Whether a Proxy passes by reference, as on workerd: when its prototype chain (as its traps give
 * it) says it is a plain object (its own properties are then reachable, as a plain object's are
 * through a pipeline) or an {@link RpcTarget} (its class members). Any other Proxy (of an array, a
 * Map, a Date, an object without a prototype …) throws the platform's `DataCloneError`.
 */
function emulatesReceiver(proxy: object): true {
  let proto = Object.getPrototypeOf(proxy) as object | null;
  if (proto === Object.prototype) return true;
  for (; proto !== null; proto = Object.getPrototypeOf(proto) as object | null) {
    if (proto === RpcTarget.prototype) return true;
  }
  throw new DOMException(
    "Proxy could not be serialized because it is not a valid RPC receiver type. The Proxy must emulate either a plain object or an RpcTarget, as indicated by the Proxy's prototype chain.",
    "DataCloneError",
  );
}

/**
 * A revoked Proxy is refused before anything else is asked of it, as on workerd: `TypeError: Proxy
 * is revoked` (compared through Miniflare), not the TypeError of the first trap that runs (which
 * named `getPrototypeOf`, and a revoked proxy of a function passed as a stub). Told without running
 * a trap by Node's `util.inspect` (`<Revoked Proxy>`); where that is missing, by `getPrototypeOf`
 * failing with V8's own error for a revoked proxy.
 */
function refuseRevoked(proxy: object): void {
  if (isRevoked(proxy)) throw new TypeError("Proxy is revoked");
}

/**
 * What a method (or a getter) gave, checked as workerd checks it before anything else: a revoked
 * Proxy is the TypeError of the `'has'` check workerd makes first (compared through Miniflare). A
 * promise is left alone (an async method's revoked Proxy fails when the promise resolves, on `'get'`
 * of its `then`, as on workerd).
 */
export function checkReturned<T>(value: T): T {
  if (
    ((typeof value === "object" && value !== null) || typeof value === "function") &&
    isProxy(value) &&
    isRevoked(value)
  )
    throw new TypeError("Cannot perform 'has' on a proxy that has been revoked");
  return value;
}

function isRevoked(proxy: object): boolean {
  if (nodeUtil?.inspect !== undefined) {
    return nodeUtil.inspect(proxy, { showProxy: true, depth: -1 }) === "<Revoked Proxy>";
  }
  try {
    Object.getPrototypeOf(proxy);
    return false;
  } catch (error) {
    return error instanceof TypeError && / on a proxy that has been revoked$/.test(error.message);
  }
}

function dispose(references: readonly Reference[]): void {
  for (const r of references) r.disposed = true;
}

/**
 * A result crossing from `from` to `to`: as {@link cross}, and an object result gets the platform's
 * `[Symbol.dispose]()` (not enumerable), which disposes the stubs in it.
 */
export function crossResult(value: unknown, from: Side, to: Side): unknown {
  const { value: copy, references } = cross(value, from, to);
  if (typeof copy === "object" && copy !== null) {
    Object.defineProperty(copy, Symbol.dispose, {
      value: () => dispose(references),
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }
  return copy;
}

/**
 * Arguments crossing from `from` to `to` for one call: the stubs made for them are disposed by
 * `done()`, when the call returns (a `dup()` the callee made stays usable).
 */
export function crossArguments(args: unknown[], from: Side, to: Side): { args: unknown[]; done: () => void } {
  const { value, references } = cross(args, from, to);
  return { args: value as unknown[], done: () => dispose(references) };
}

/** The platform's text for a call of a member that is not a function. */
function notAFunctionMessage(path: readonly string[]): string {
  return `"${path.length === 0 ? "(this)" : path.join(".")}" is not a function.`;
}

/**
 * Runs a call (`args`) or a property read (`args` undefined) at `path` below `reference`'s value, on
 * its owner's side; the result crosses back to the holder.
 */
function callReference(reference: Reference, path: readonly string[], args: unknown[] | undefined): Promise<unknown> {
  if (reference.disposed) return Promise.reject(disposedError());
  let sent: { args: unknown[]; done: () => void } | undefined;
  try {
    if (args !== undefined) sent = crossArguments(args, reference.holder, reference.owner);
  } catch (e) {
    return Promise.reject(e);
  }
  const running = reference.owner.run(async () => {
    const result = await checkReturned(resolvePath(reference.value, path, sent?.args));
    return crossResult(result, reference.owner, reference.holder);
  });
  return sent === undefined ? running : running.finally(sent.done);
}

/**
 * On the owner's side: the value at `path` below `root` (a function, a target, or what a target's
 * member gave), called with `args` when given. A stub met on the way forwards the rest of the path.
 */
function resolvePath(root: unknown, path: readonly string[], args: unknown[] | undefined): unknown {
  let value: unknown = root;
  let thisArg: unknown;
  for (let i = 0; i < path.length; i++) {
    const name = path[i] as string;
    const held = typeof value === "function" || typeof value === "object" ? STUBS.get(value as object) : undefined;
    if (held !== undefined) return callReference(held, path.slice(i), args);
    if (value instanceof RpcTarget) {
      const member = findMember(value, name);
      if (member === undefined) throw new TypeError(missingMethodMessage(name));
      thisArg = value;
      value = "value" in member ? member.value : member.get?.call(value);
    } else if (isPlain(value)) {
      if (!Object.hasOwn(value, name)) throw new TypeError(missingMethodMessage(name));
      thisArg = value;
      value = (value as Record<string, unknown>)[name];
    } else {
      throw new TypeError(missingMethodMessage(name));
    }
  }
  if (args === undefined) return value;
  const held = typeof value === "function" ? STUBS.get(value) : undefined;
  if (held !== undefined) return callReference(held, [], args);
  if (typeof value !== "function" || value instanceof RpcTarget) throw new TypeError(notAFunctionMessage(path));
  return (value as (...a: unknown[]) => unknown).apply(thisArg, args);
}

/** A plain object or array: its own properties are reachable through a pipeline. */
function isPlain(value: unknown): value is object {
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === Object.prototype || proto === null;
}

/** The stub the holder side sees for `reference`: callable, its properties are the target's members. */
function stubFor(reference: Reference): unknown {
  const stub: object = new Proxy(() => {}, {
    get(_target, key) {
      if (key === Symbol.toStringTag) return "JsRpcStub";
      if (key === Symbol.dispose) return () => dispose([reference]);
      // As on the platform, a stub has no array-index members (`stub[0]` is undefined).
      if (typeof key === "symbol" || key === "then" || isIndex(key)) return undefined;
      if (key === "constructor") return RpcStub;
      if (key in Object.prototype) return Reflect.get(Object.prototype, key);
      if (key === "dup") {
        return () => {
          // As on the platform, a dup() of a disposed stub is a stub too; it fails when called.
          const copy = new Reference(reference.value, reference.owner, reference.holder);
          copy.disposed = reference.disposed;
          return stubFor(copy);
        };
      }
      return propertyOf((path, args) => callReference(reference, path, args), [key]);
    },
    apply: (_target, _this, args: unknown[]) => pipelined(callReference(reference, [], args)),
    has: (_target, key) => typeof key === "string",
    ownKeys: () => [],
    getOwnPropertyDescriptor: () => undefined,
  });
  STUBS.set(stub, reference);
  // Thrown, a stub is described as the platform describes it (`Error: #<RpcStub>`).
  markDescription(stub, "#<RpcStub>");
  return stub;
}

/** Runs a property read (`args` undefined) or a call at `path`. */
export type PathRunner = (path: readonly string[], args: unknown[] | undefined) => Promise<unknown>;

/**
 * A property of a stub or of a pipelined promise (the platform's `JsRpcProperty`): awaiting it reads
 * the property, calling it calls the method, and its own properties go one level deeper.
 */
export function propertyOf(run: PathRunner, path: readonly string[]): unknown {
  return new Proxy(() => {}, {
    get(_target, key) {
      if (key === Symbol.toStringTag) return "JsRpcProperty";
      if (key === "then") {
        return (resolve?: (v: unknown) => unknown, reject?: (e: unknown) => unknown) =>
          run(path, undefined).then(resolve, reject);
      }
      if (typeof key === "symbol") return undefined;
      if (key in Object.prototype) return Reflect.get(Object.prototype, key);
      return propertyOf(run, [...path, key]);
    },
    apply: (_target, _this, args: unknown[]) => {
      const promise = run(path, args);
      // JSON.stringify calls `toJSON` of a stub (or of a result holding one) by itself, as on the
      // platform: the call fails there (no such method) and JSON.stringify leaves the stub out. That
      // failure, which nobody asked for, must not be an unhandled rejection (it ends a Node process);
      // an explicit `await stub.toJSON()` still sees it.
      if (path[path.length - 1] === "toJSON") promise.catch(() => {});
      return pipelined(promise);
    },
  });
}

// Each proxy below answers the names of Object.prototype (toString, valueOf …) with its members, as
// the platform's stubs, properties and promises do; every other name is a member of what they reach.

/** Whether `key` is an array index as a string (a pipelined promise has no such properties). */
function isIndex(key: string): boolean {
  return /^(?:0|[1-9][0-9]*)$/.test(key) && Number(key) < 2 ** 32 - 1;
}

/**
 * The promise of a call, pipelined (the platform's `JsRpcPromise`): it is awaited as the call's
 * result, and its properties read or call members of the result before it arrives.
 */
export function pipelined(promise: Promise<unknown>): Promise<unknown> {
  const run: PathRunner = (path, args) => readThrough(promise, path, args);
  return new Proxy(() => {}, {
    get(_target, key) {
      if (key === "then" || key === "catch" || key === "finally") {
        const method = promise[key] as (...a: unknown[]) => unknown;
        return (...a: unknown[]) => method.apply(promise, a);
      }
      if (key === Symbol.toStringTag) return "JsRpcPromise";
      if (key === Symbol.dispose) {
        return () => {
          promise.then(
            (value) => (value as { [Symbol.dispose]?: () => void } | null)?.[Symbol.dispose]?.(),
            () => {},
          );
        };
      }
      if (typeof key === "symbol" || isIndex(key)) return undefined;
      if (key in Object.prototype) return Reflect.get(Object.prototype, key);
      return propertyOf(run, [key]);
    },
    apply: (_target, _this, args: unknown[]) => pipelined(run([], args)),
  }) as unknown as Promise<unknown>;
}

/**
 * What `path` gives below the value `promise` resolves to (see {@link pipelined}): a read, or a
 * call with `args`.
 */
export function readThrough(
  promise: Promise<unknown>,
  path: readonly string[],
  args: unknown[] | undefined,
): Promise<unknown> {
  return promise.then((value) => resolveCopy(value, path, args));
}

/**
 * The member at `path` of a result the caller already holds (its copy), as {@link resolvePath} finds
 * it on the owner's side: in a copy, functions and targets are stubs already, so only plain objects'
 * own properties and the stubs are walked. A failed lookup is marked as the other side's
 * (`remote: true`), as the platform's are.
 */
function resolveCopy(root: unknown, path: readonly string[], args: unknown[] | undefined): unknown {
  try {
    return resolvePath(root, path, args);
  } catch (e) {
    throw e instanceof TypeError ? markCrossing(e, { remote: true }) : e;
  }
}
