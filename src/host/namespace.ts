/**
 * A namespace: the objects of one registered class, addressed the platform's way
 * (`DurableObjectNamespace`): make or parse an id, get a stub, call the stub.
 *
 * A stub is a proxy: `stub.fetch(request)` sends a request; any other property is a method of the
 * object, called by RPC (`await stub.increment(2)`), with arguments and results cloned across the
 * boundary (see boundary.ts). Like the platform's, a stub binds to the object's current instance on
 * its first call; when that instance is reset, the stub's pending calls fail with the reset's error
 * and so does every later call on that stub. A new stub (`namespace.get(id)` again) reaches the
 * fresh instance. An eviction is not a reset: a stub outlives it and wakes the object on its next call.
 */

import type { CriticalSections } from "../context/object-context";
import { belongsTo, ObjectId, scopedIdFromName, scopedIdFromString, scopedUniqueId } from "../context/object-id";
import type { RpcTarget } from "../context/rpc-target";
import { ActorStoreError } from "../errors";
import { isDictionary } from "../storage/argument-types";
import { cloneAcross, cloneResult, markUnserializable } from "./boundary";
import {
  CALLER_SIDE,
  checkReturned,
  crossArguments,
  crossResult,
  findMember,
  missingMethodMessage,
  type PathRunner,
  propertyOf,
  readThrough,
  type Side,
} from "./rpc-references";

/** Names a stub keeps for itself (the platform's reserved names); they are never RPC methods. */
export type ReservedStubName =
  | "fetch"
  | "connect"
  | "alarm"
  | "webSocketMessage"
  | "webSocketClose"
  | "webSocketError"
  | "id"
  | "name"
  | "then";

/**
 * The RPC methods of an object class instance `I`: each returns a promise of its awaited result as the
 * caller receives it ({@link RemoteResult}).
 */
export type RpcMethods<I> = {
  [K in keyof I as K extends ReservedStubName
    ? never
    : K extends string
      ? [I[K]] extends [never]
        ? never
        : I[K] extends (...args: never[]) => unknown
          ? K
          : never
      : never]: I[K] extends (...args: infer A) => infer R ? (...args: A) => RemoteResult<Awaited<R>> : never;
};

/** Values that cross as they are (cloned or transferred), with nothing inside them made a stub. */
type CrossesAsIs =
  | Date
  | RegExp
  | Error
  | ArrayBuffer
  | ArrayBufferView
  | Request
  | Response
  | Headers
  | ReadableStream
  | WritableStream;

/**
 * What a value of type `T` is once it crossed the boundary: a function or an `RpcTarget` is a
 * {@link RemoteStub}; inside arrays, Maps, Sets and plain objects likewise; anything else a copy.
 */
export type Remote<T> = T extends RpcTarget | ((...args: never[]) => unknown)
  ? RemoteStub<T>
  : T extends CrossesAsIs
    ? T
    : T extends Map<infer K, infer V>
      ? Map<Remote<K>, Remote<V>>
      : T extends Set<infer V>
        ? Set<Remote<V>>
        : T extends readonly unknown[]
          ? { [P in keyof T]: Remote<T[P]> }
          : T extends object
            ? { [P in keyof T]: Remote<T[P]> }
            : T;

/**
 * The members of `T` as a stub or a pipelined promise gives them: each method returns a
 * {@link RemoteResult}, each other property is a {@link RemoteResult} of its value (await it to read
 * it). A function is callable the same way.
 */
export type RemoteMembers<T> = (T extends (...args: infer A) => infer R
  ? (...args: A) => RemoteResult<Awaited<R>>
  : unknown) & {
  [K in keyof T as K extends string ? ([T[K]] extends [never] ? never : K) : never]: T[K] extends (
    ...args: infer A
  ) => infer R
    ? (...args: A) => RemoteResult<Awaited<R>>
    : RemoteResult<Awaited<T[K]>>;
};

/**
 * A function or `RpcTarget` of the other side of the boundary, as its stub: calls run where it lives.
 * `dup()` is another stub of it that outlives this one's disposal (`[Symbol.dispose]()`).
 */
export type RemoteStub<T> = RemoteMembers<T> & {
  /** Another stub of the same function or target, disposed on its own. */
  dup(): RemoteStub<T>;
};

/**
 * The promise of a call or a read across the boundary: its result as the caller receives it
 * ({@link Remote}), pipelined: the members of an object result can be read or called before it
 * arrives (`await stub.open().name`).
 */
export type RemoteResult<R> = [R] extends [never]
  ? Promise<never>
  : Promise<Remote<R>> & (R extends object ? RemoteMembers<R> : unknown);

/**
 * The platform's type brand on a stub of a class that carries it (one extending `DurableObject`),
 * as the platform's `DurableObjectStub<T>` has it: a declaration only, no property at run time.
 */
export type StubBrand<I> = I extends { readonly __DURABLE_OBJECT_BRAND: never }
  ? { readonly __DURABLE_OBJECT_BRAND: never }
  : unknown;

/**
 * A stub for one object: `fetch`, its id and name, and the object's methods by RPC. It is assignable
 * to the platform's `DurableObjectStub`, and to `DurableObjectStub<T>` while `T`'s public members are
 * methods whose results are not objects (the platform's types give an object result a disposer and
 * brand its stubs, which these types leave out; at run time results are pipelined and disposable as
 * there, see {@link RemoteResult}).
 */
export type ObjectStub<I = unknown> = RpcMethods<I> &
  StubBrand<I> & {
    /** The id of the object this stub reaches. */
    readonly id: ObjectId;
    /** The name the id was made from, when the id was made by `idFromName`/`getByName`. */
    readonly name?: string;
    /**
     * Sends an HTTP request to the object's `fetch()` handler and resolves with the `Response` it
     * returned. (`R` only lets the stub stand where the platform's `Response` type is expected.)
     */
    fetch<R = Response>(input: Request | string | URL | RequestLike, init?: RequestInit | RequestInitLike): Promise<R>;
    /** Raw sockets to an object are not supported here; always throws. */
    connect(address: unknown, options?: unknown): never;
  };

/** A request of another type declaration of the same runtime class (the platform's `Request` type, say). */
export interface RequestLike {
  readonly url: string;
  readonly method: string;
}

/** Request options of another type declaration (the platform's `RequestInit` type, say). */
export interface RequestInitLike {
  method?: string;
  headers?: unknown;
  body?: unknown;
}

/** Options of `newUniqueId`, as on the platform (the jurisdiction does not change local ids). */
export interface NewUniqueIdOptions {
  jurisdiction?: ObjectJurisdiction;
}

/** Options of `get`/`getByName`, as on the platform (location hints mean nothing locally). */
export interface GetObjectOptions {
  locationHint?: string;
  routingMode?: string;
  retry?: { maxRetries?: number; timeoutMs?: number };
}

/** The platform's jurisdictions. */
export type ObjectJurisdiction = "eu" | "fedramp" | "fedramp-high" | "us";
const JURISDICTIONS: ReadonlySet<string> = new Set(["eu", "fedramp", "fedramp-high", "us"]);

/**
 * One event a stub sends: a request, a method call, or a property read. Plain data (arguments already
 * cloned), so a host can also send it to another process, unless it carries `references` (a host
 * that passes functions and `RpcTarget`s by reference, in one process). @internal
 */
export type StubOperation =
  | { readonly kind: "fetch"; readonly request: Request }
  | {
      readonly kind: "call";
      readonly method: string;
      readonly args: unknown[];
      readonly references?: ObjectSides;
      /** Set to the instance the call is delivered to (the owner of what it passes back in `args`' stubs). */
      readonly receiver?: CallReceiver;
    }
  | { readonly kind: "get"; readonly property: string; readonly references?: ObjectSides }
  /** Starts the object (so that its alarm is armed) and runs nothing. */
  | { readonly kind: "start" }
  /**
   * Runs a call on a function or target the object passed by reference. `owner` is the instance
   * that passed it: the call fails if that instance is gone (evicted or reset), and never starts
   * another.
   */
  | {
      readonly kind: "invoke";
      readonly owner: object;
      readonly thunk: () => unknown;
      /** The critical sections of `owner` it was passed from: it runs inside them while they last. */
      readonly within?: CriticalSections;
    };

/** The instance a call was delivered to, once it was. @internal */
export interface CallReceiver {
  instance: object | undefined;
}

/** The object's side of the boundary, for the references a call's result passes. @internal */
export interface ObjectSides {
  /** The side of `instance`: calls on what it passed run as events on it. */
  side(instance: object): Side;
}

/** What a stub's calls go through (the host). @internal */
export interface Dispatcher {
  /**
   * Runs `operation` as one event on the object (waking it if needed; see {@link applyOperation}).
   * `binding` is the stub's: the host binds it to the instance and fails the call when the instance
   * it was bound to was reset. What the object throws reaches the caller as the boundary delivers it
   * (see boundary.ts); the host's own errors (closed, persistence failed to open) reach it unchanged.
   */
  dispatch(namespace: string, id: ObjectId, binding: StubBinding, operation: StubOperation): Promise<unknown>;
  /**
   * Whether functions and `RpcTarget`s pass by reference (true for one host in one process); without
   * it they fail with `DataCloneError`, as what crosses between processes must be data.
   */
  readonly references?: boolean;
}

/** The platform's error for a stub whose object instance is gone. */
export function instanceGoneError(): ActorStoreError {
  return new ActorStoreError(
    "ERR_CLOSED",
    "The object that passed this stub was evicted since (idle for idleTimeoutMs), and its functions and RpcTargets went with it; call the object again for a new stub, or raise idleTimeoutMs.",
  );
}

/** Runs one stub operation on an instance, by the platform's rules. @internal */
export function applyOperation(instance: object, operation: StubOperation): unknown {
  if (operation.kind === "start") return undefined;
  if (operation.kind === "invoke") {
    if (operation.owner !== instance) throw instanceGoneError();
    return operation.thunk();
  }
  if (operation.kind === "fetch") {
    const handler = (instance as { fetch?: unknown }).fetch;
    if (typeof handler !== "function") throw new Error("Handler does not export a fetch() function.");
    return (handler as (r: Request) => Response | Promise<Response>).call(instance, operation.request);
  }
  const name = operation.kind === "call" ? operation.method : operation.property;
  if (RESERVED_HANDLERS.has(name)) throw new TypeError(`'${name}' is a reserved method and cannot be called over RPC.`);
  if (operation.kind === "call" && operation.receiver !== undefined) operation.receiver.instance = instance;
  const member = findMember(instance, name);
  if (member === undefined) throw new TypeError(missingMethodMessage(name));
  const gotten = "value" in member ? member.value : member.get?.call(instance);
  const value = operation.kind === "get" ? checkReturned(gotten) : gotten;
  const references = operation.references;
  if (operation.kind === "get") {
    return references === undefined ? value : crossResult(value, references.side(instance), CALLER_SIDE);
  }
  if (typeof value !== "function") throw new TypeError(missingMethodMessage(name));
  const result = checkReturned((value as (...a: unknown[]) => unknown).apply(instance, operation.args));
  if (references === undefined) return result;
  // The result crosses in the object's event, so the stubs in it run on this instance.
  return Promise.resolve(result).then((v) => crossResult(v, references.side(instance), CALLER_SIDE));
}

/** The event handlers the platform refuses to run over RPC (the host calls them itself). */
const RESERVED_HANDLERS: ReadonlySet<string> = new Set([
  "alarm",
  "webSocketMessage",
  "webSocketClose",
  "webSocketError",
]);

/** A stub's binding to one instance of its object. @internal */
export interface StubBinding {
  /** The instance's token once bound: its `error` is set when that instance is reset. */
  token: { error: Error | null } | null;
}

/**
 * The namespace of one registered class, shaped like the platform's `DurableObjectNamespace`.
 *
 * @example
 * ```ts
 * const host = new ObjectHost({ namespaces: { COUNTER: Counter } });
 * const stub = host.env.COUNTER.get(host.env.COUNTER.idFromName("a"));
 * await stub.increment(2);
 * ```
 */
export class ObjectNamespace<I = unknown> {
  /** The namespace's name (its binding name in the host's `env`). */
  readonly name: string;
  readonly #key: string;
  readonly #dispatcher: Dispatcher;
  readonly #jurisdiction: ObjectJurisdiction | undefined;

  /** @internal Namespaces are made by the host. */
  constructor(name: string, key: string, dispatcher: Dispatcher, jurisdiction?: ObjectJurisdiction) {
    this.name = name;
    this.#key = key;
    this.#dispatcher = dispatcher;
    this.#jurisdiction = jurisdiction;
  }

  /**
   * The id of the object called `name` in this namespace (the same name always gives the same id).
   * `name` converts to a string as on the platform (`5` is `"5"`, a Symbol is a `TypeError`).
   */
  idFromName(name: string): ObjectId {
    // biome-ignore lint/complexity/noArguments: a missing argument differs from an explicit undefined, as on the platform
    if (arguments.length === 0) throw argumentError("idFromName", 1, "string");
    return scopedIdFromName(this.#key, toDomString(name), this.#jurisdiction);
  }

  /**
   * Parses an id's 64 hex digits. Throws `TypeError` if it is not 64 hex digits, or if another
   * namespace made it.
   */
  idFromString(id: string): ObjectId {
    // biome-ignore lint/complexity/noArguments: a missing argument differs from an explicit undefined, as on the platform
    if (arguments.length === 0) throw argumentError("idFromString", 1, "string");
    return scopedIdFromString(this.#key, toDomString(id));
  }

  /** A new random id in this namespace. */
  newUniqueId(options?: NewUniqueIdOptions): ObjectId {
    if (!isDictionary(options)) throw argumentError("newUniqueId", 1, "NewUniqueIdOptions");
    if (options?.jurisdiction !== undefined) checkJurisdiction(options.jurisdiction);
    return scopedUniqueId(this.#key, options?.jurisdiction ?? this.#jurisdiction);
  }

  /** A stub for the object with this id (the object starts on the stub's first call). */
  get(id: ObjectId | { toString(): string }, options?: GetObjectOptions): ObjectStub<I> {
    if (!(id instanceof ObjectId)) throw argumentError("get", 1, "DurableObjectId");
    if (!isDictionary(options)) throw argumentError("get", 2, "GetDurableObjectOptions");
    if (!belongsTo(this.#key, id.toString())) throw new TypeError("Durable Object ID is not valid for this namespace.");
    return createStub<I>(this.name, id, this.#dispatcher);
  }

  /** `get(idFromName(name))`. */
  getByName(name: string, options?: GetObjectOptions): ObjectStub<I> {
    // biome-ignore lint/complexity/noArguments: a missing argument differs from an explicit undefined, as on the platform
    if (arguments.length === 0) throw argumentError("getByName", 1, "string");
    const id = scopedIdFromName(this.#key, toDomString(name), this.#jurisdiction);
    if (!isDictionary(options)) throw argumentError("getByName", 2, "GetDurableObjectOptions");
    return this.get(id, options);
  }

  /**
   * The namespace restricted to a jurisdiction: its ids carry it (`id.jurisdiction`). Locally that
   * restricts nothing else: the same id strings and objects (the platform keeps such objects in the
   * jurisdiction's data centres).
   */
  jurisdiction(jurisdiction: ObjectJurisdiction): ObjectNamespace<I> {
    checkJurisdiction(jurisdiction);
    return new ObjectNamespace<I>(this.name, this.#key, this.#dispatcher, jurisdiction);
  }
}

/** The platform's `TypeError` for an argument of the wrong type (or a missing one). */
function argumentError(method: string, position: number, type: string): TypeError {
  return new TypeError(
    `Failed to execute '${method}' on 'DurableObjectNamespace': parameter ${position} is not of type '${type}'.`,
  );
}

/** Converts an argument to a string as the platform's bindings do: a Symbol is a `TypeError`. */
function toDomString(value: unknown): string {
  if (typeof value === "symbol") throw new TypeError("Cannot convert a Symbol value to a string");
  return String(value);
}

function checkJurisdiction(jurisdiction: unknown): void {
  if (typeof jurisdiction !== "string" || !JURISDICTIONS.has(jurisdiction)) {
    throw new TypeError(
      `Unknown jurisdiction "${String(jurisdiction)}"; expected one of ${[...JURISDICTIONS].join(", ")}.`,
    );
  }
}

/** Calls `promise`-returning `fn`, turning a synchronous throw into a rejection. */
async function settle<T>(fn: () => Promise<T>): Promise<T> {
  return fn();
}

function createStub<I>(namespace: string, id: ObjectId, dispatcher: Dispatcher): ObjectStub<I> {
  const binding: StubBinding = { token: null };
  const run = (operation: StubOperation): Promise<unknown> => dispatcher.dispatch(namespace, id, binding, operation);
  const target: Record<string, unknown> = {};
  // In the platform's order: `Object.keys(stub)` is ["name", "id"].
  Object.defineProperty(target, "name", { value: id.name, enumerable: true });
  Object.defineProperty(target, "id", { value: id, enumerable: true });
  Object.defineProperty(target, "fetch", {
    writable: true,
    value: (input: Request | string | URL | RequestLike, init?: RequestInit | RequestInitLike): Promise<unknown> =>
      settle(() => {
        const request = new Request(input as Request | string | URL, init as RequestInit | undefined);
        return run({ kind: "fetch", request });
      }),
  });
  Object.defineProperty(target, "connect", {
    writable: true,
    value: (): never => {
      throw new TypeError("connect() to an object is not supported by this host; use fetch() or RPC.");
    },
  });
  const references = dispatcher.references === true;
  const sides: ObjectSides = {
    side: (instance) => ({ run: (thunk) => run({ kind: "invoke", owner: instance, thunk }) }),
  };
  const call = async (name: string, args: unknown[]): Promise<unknown> => {
    if (!references) return cloneResult(await run({ kind: "call", method: name, args: cloneAcross(args) }));
    // The stubs the object gets for functions in the arguments call back here, and are disposed
    // when the call returns (unless the object kept a dup()). What the object passes in calls on
    // them is its own: calls on that run as events on the instance that received this call, and
    // fail once it is gone (they never start another instance to run the old one's closures in).
    const receiver: CallReceiver = { instance: undefined };
    const holder: Side = {
      run: (thunk) =>
        receiver.instance === undefined
          ? Promise.reject(instanceGoneError())
          : run({ kind: "invoke", owner: receiver.instance, thunk }),
    };
    const sent = crossArguments(args, CALLER_SIDE, holder);
    try {
      return await run({ kind: "call", method: name, args: sent.args, references: sides, receiver });
    } finally {
      sent.done();
    }
  };
  const get = async (name: string): Promise<unknown> =>
    references
      ? run({ kind: "get", property: name, references: sides })
      : cloneResult(await run({ kind: "get", property: name }));
  // `stub.m(…)` calls the method; `await stub.m` reads the property (a getter on the class); deeper
  // paths (`stub.m.x`, `stub.m(…).x`) pipeline on what they give, as on the platform.
  const runPath: PathRunner = (path, args) =>
    settle(async () => {
      const name = path[0] as string;
      if (path.length === 1) return args === undefined ? get(name) : call(name, args);
      return readThrough(get(name), path.slice(1), args);
    });
  const members = new Map<string, unknown>();
  const stub = new Proxy(target, {
    get(t, prop) {
      if (typeof prop === "symbol" || prop in t) return Reflect.get(t, prop);
      if (prop === "then") return undefined;
      let m = members.get(prop);
      if (m === undefined) members.set(prop, (m = propertyOf(runPath, [prop])));
      return m;
    },
    // As on the platform, a stub takes other properties (`stub.x = 1` keeps 1, fetch included), but
    // not its id or name.
    set(t, prop, value) {
      if (prop === "id" || prop === "name") {
        throw new TypeError(`Cannot assign to read only property '${prop}' of object '#<DurableObject>'`);
      }
      if (Object.hasOwn(t, prop)) return Reflect.set(t, prop, value);
      Object.defineProperty(t, prop, { value, writable: true, enumerable: true, configurable: true });
      return true;
    },
  });
  // A stub is not data: passed as an argument or a result it fails as on the platform.
  markUnserializable(stub, "DurableObject");
  return stub as unknown as ObjectStub<I>;
}
