/**
 * The object host's options: their check (an unknown or mistyped option is a `TypeError` that names
 * it) and the persistence factories (one adapter per object).
 */
import type { ObjectId } from "../context/object-id";
import { openFilePersistence } from "../durability/file-persistence";
import { createMemoryPersistence } from "../durability/memory-persistence";
import type { PersistenceAdapter } from "../durability/persistence";
import { type AlarmIndex, directoryAlarmIndex, memoryAlarmIndex, namespaceDirectory } from "./alarm-index";

/**
 * Opens the persistence of one object. Called each time the object starts (its first event after
 * the host started or after an eviction), so it must return an adapter over the same data each time
 * for the same namespace and id.
 */
export type PersistenceFactory = (id: ObjectId, namespace: string) => PersistenceAdapter | Promise<PersistenceAdapter>;

/**
 * The alarm index that goes with a factory's data (the host uses it unless told otherwise). Set by
 * the factories of this module and of the cluster layer. @internal
 */
export const ALARM_INDEX: unique symbol = Symbol("actorstore.alarmIndex");

/** A factory with the alarm index kept beside its data. @internal */
export function withIndex(factory: PersistenceFactory, index: AlarmIndex): PersistenceFactory {
  return Object.assign(factory, { [ALARM_INDEX]: index });
}

/** The alarm index attached to a factory, if any. @internal */
export function indexOf(factory: PersistenceFactory): AlarmIndex | undefined {
  return (factory as { [ALARM_INDEX]?: AlarmIndex })[ALARM_INDEX];
}

/**
 * One in-memory adapter per object, kept for the life of the factory: an evicted object's data stays
 * in memory (only its database engine is closed), so memory grows with the number of objects that
 * ever wrote, not with the active set. For many objects use {@link directoryPerObject}.
 */
export function memoryPerObject(): PersistenceFactory {
  const adapters = new Map<string, PersistenceAdapter>();
  return withIndex((id, namespace) => {
    const key = `${namespace}/${id.toString()}`;
    let adapter = adapters.get(key);
    if (adapter === undefined) adapters.set(key, (adapter = createMemoryPersistence()));
    return adapter;
  }, memoryAlarmIndex());
}

/**
 * One directory per object: `<root>/<namespace>/<id>` (the namespace URI-encoded, a leading "."
 * as "%2E", the empty name as "%", so no binding name reaches outside `root`; file persistence, with its one-writer lock
 * where the file persistence has one). An evicted object holds no memory at all. The objects'
 * pending alarms are indexed in `<root>/.alarms/<namespace>/`, so a host started over `root` later
 * wakes them when due.
 */
export function directoryPerObject(root: string): PersistenceFactory {
  if (typeof root !== "string" || root === "")
    throw new TypeError("directoryPerObject(root): root must be a non-empty path.");
  const base = root.endsWith("/") ? root.slice(0, -1) : root;
  return withIndex(
    (id, namespace) => openFilePersistence(`${base}/${namespaceDirectory(namespace)}/${id.toString()}`),
    directoryAlarmIndex(`${base}/.alarms`),
  );
}

/**
 * Checks that `options` is an object with only `allowed` keys, each of the expected type. Throws a
 * `TypeError` naming the first offending option.
 */
export function checkOptions(
  where: string,
  options: unknown,
  allowed: Record<string, "function" | "number" | "object" | "string" | "boolean" | "any">,
): void {
  if (options === undefined) return;
  if (typeof options !== "object" || options === null) throw new TypeError(`${where}: options must be an object.`);
  for (const [key, value] of Object.entries(options)) {
    const type = allowed[key];
    if (type === undefined) {
      throw new TypeError(`${where}: unknown option "${key}" (known options: ${Object.keys(allowed).join(", ")}).`);
    }
    if (value === undefined || type === "any") continue;
    const actual = value === null ? "null" : typeof value;
    if (actual !== type) throw new TypeError(`${where}: option "${key}" must be a ${type}, got ${actual}.`);
  }
}
