/**
 * One Durable Object class, written once as JavaScript source, run in both worlds: inline in a
 * Miniflare worker script (real workerd) and, turned into a class with `new Function`, inside an
 * {@link ObjectContext}. The gates and alarm suites compare what clients observe of the two.
 *
 * Both sides report each request as an {@link Outcome}: the status and JSON body of the response,
 * or the name and message of the error the caller received. On workerd the caller is a small router worker
 * that forwards to the object's stub and catches its rejection; on our side it is the host calling
 * `context.fetch()`.
 *
 * @example
 * ```ts
 * const Probe = classFromSource(PROBE_SOURCE, "Probe");
 * const context = await ObjectContext.create(Probe, { id: randomUUID() });
 * const ours = await ourSide(context).request("/increment");
 * ```
 */
import { Miniflare, type WorkerOptions } from "miniflare";
import type { ObjectClass, ObjectContext } from "../../src/context/object-context";
import { ensureWorkerdExecutable } from "./workerd";

/** What a client observed of one request. */
export type Outcome =
  | { readonly ok: true; readonly status: number; readonly body: unknown }
  | { readonly ok: false; readonly name: string; readonly error: string };

/** One object as a client sees it: requests to a path, alone or several at once. */
export interface ObjectSide {
  request(path: string): Promise<Outcome>;
  /** Sends one request per path, all in the same turn; outcomes in sending order. */
  concurrent(paths: readonly string[]): Promise<Outcome[]>;
}

/**
 * Evaluates `source` (a class declaration) and returns the class named `className`. The source
 * only uses globals (`Response`, `URL`, `setTimeout`, `Date`), which Node has as well.
 */
export function classFromSource(source: string, className: string): ObjectClass {
  // The whole point is to run the very text that workerd runs, hence an evaluated string.
  const factory = new Function(`"use strict";\n${source}\nreturn ${className};`) as () => ObjectClass;
  return factory();
}

/**
 * A worker script with the class and a router: `GET /?name=N&paths=["/a","/b"]` sends one request
 * per path, concurrently, to the object named N and answers the JSON list of their {@link Outcome}s.
 */
export function objectWorkerScript(source: string, className: string): string {
  return `
${source}
export { ${className} };

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const stub = env.OBJECT.get(env.OBJECT.idFromName(url.searchParams.get("name")));
    const paths = JSON.parse(url.searchParams.get("paths"));
    const one = async (path) => {
      try {
        const response = await stub.fetch("http://object" + path);
        return { ok: true, status: response.status, body: await response.json() };
      } catch (error) {
        return { ok: false, name: String(error && error.name), error: String(error && error.message) };
      }
    };
    return Response.json(await Promise.all(paths.map(one)));
  },
};
`;
}

/** Miniflare worker options for {@link objectWorkerScript} (SQLite-backed, like our storage). */
export function objectWorker(
  name: string,
  source: string,
  className: string,
  compatibilityDate: string,
): WorkerOptions {
  return {
    name,
    modules: true,
    script: objectWorkerScript(source, className),
    compatibilityDate,
    durableObjects: { OBJECT: { className, useSQLite: true } },
  };
}

/** Starts one Miniflare instance with `workers` (the first one answers `dispatchFetch`). */
export async function startMiniflare(workers: WorkerOptions[]): Promise<Miniflare> {
  ensureWorkerdExecutable();
  const mf = new Miniflare({ workers });
  await mf.ready;
  return mf;
}

/** The object named `objectName` of the router worker `workerName`, as a client sees it. */
export async function workerdSide(mf: Miniflare, workerName: string, objectName: string): Promise<ObjectSide> {
  const worker = await mf.getWorker(workerName);
  const send = async (paths: readonly string[]): Promise<Outcome[]> => {
    const query = new URLSearchParams({ name: objectName, paths: JSON.stringify(paths) });
    const response = await worker.fetch(`http://router/?${query}`);
    const text = await response.text();
    if (!response.ok) throw new Error(`router failed (${response.status}): ${text}`);
    return JSON.parse(text) as Outcome[];
  };
  return {
    async request(path) {
      const [outcome] = await send([path]);
      if (outcome === undefined) throw new Error("router answered no outcome");
      return outcome;
    },
    concurrent: send,
  };
}

/** What a client of `context.fetch()` observes (the same shape as the router's outcomes). */
export async function outcomeOf(response: Promise<Response>): Promise<Outcome> {
  try {
    const res = await response;
    return { ok: true, status: res.status, body: await res.json() };
  } catch (error) {
    if (error instanceof Error) return { ok: false, name: error.name, error: error.message };
    return { ok: false, name: `(thrown ${typeof error})`, error: String(error) };
  }
}

/** An ObjectContext as a client sees it. */
export function ourSide(context: ObjectContext): ObjectSide {
  const request = (path: string) => outcomeOf(context.fetch(new Request(`http://object${path}`)));
  return {
    request,
    // Issued in one synchronous loop, like the router's Promise.all.
    concurrent: (paths) => Promise.all(paths.map(request)),
  };
}
