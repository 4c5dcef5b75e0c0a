/**
 * The alarm index: which objects of a namespace have a pending alarm, and when, kept beside their
 * data so that a host that starts (after a restart, or when it takes objects over from a dead host)
 * can wake exactly those objects when their alarms are due, without starting every object to ask.
 *
 * The index follows the committed alarm through the object's persistence: a commit that changes the
 * alarm is confirmed only once both the commit and the index update are durable (see
 * {@link withAlarmIndex}). So a confirmed `setAlarm` is always in the index, even if the host dies
 * right after confirming it. A point-in-time restore's commit carries the restored state's alarm, so
 * the index follows it too. The index may hold more than is pending (an update that landed for a
 * commit that then failed): such an entry only costs one wake-up that finds nothing to do, after
 * which the host removes it.
 */
import type { CommitRecord } from "../durability/commit-record";
import type { PersistenceAdapter } from "../durability/persistence";

/** One indexed alarm. */
export interface AlarmIndexEntry {
  /** The object's id (64 hex digits). */
  readonly id: string;
  /** The name the id was derived from, so the woken object sees the same `ctx.id.name`. */
  readonly name?: string;
  /** The alarm's scheduled time, ms since the epoch. */
  readonly atMs: number;
}

/** Where a host records its objects' pending alarms (one set of entries per namespace). */
export interface AlarmIndex {
  /** Records the pending alarm of one object (`atMs`), or forgets it (`null`). Durable when it resolves. */
  set(namespace: string, object: { id: string; name?: string }, atMs: number | null): Promise<void>;
  /**
   * Every recorded alarm of a namespace, in no particular order. With `wanted`, an index may leave
   * out the entries of the ids (64 hex digits) it refuses without reading them: a cluster host asks
   * only for the objects it owns. Returning them anyway is correct, only slower.
   */
  list(namespace: string, wanted?: (id: string) => boolean): Promise<AlarmIndexEntry[]>;
}

/** An alarm index in memory, for hosts whose objects' data is in memory too (it lives as long as they do). */
export function memoryAlarmIndex(): AlarmIndex {
  const byNamespace = new Map<string, Map<string, AlarmIndexEntry>>();
  return {
    async set(namespace, object, atMs) {
      let entries = byNamespace.get(namespace);
      if (entries === undefined) byNamespace.set(namespace, (entries = new Map()));
      if (atMs === null) entries.delete(object.id);
      else entries.set(object.id, { id: object.id, ...(object.name === undefined ? {} : { name: object.name }), atMs });
    },
    async list(namespace) {
      return [...(byNamespace.get(namespace)?.values() ?? [])];
    },
  };
}

/**
 * The directory name of a namespace under a host's root (and under its alarm index): the name
 * URI-encoded, with a leading "." as "%2E" and the empty name as "%", so that no binding name
 * (`"."`, `".."`, `".alarms"`, `""`) can reach outside the root, share another namespace's
 * directory or the alarm index's. No URI-encoded name contains "%2E" or a lone "%", so these
 * cannot collide with another name's directory.
 */
export function namespaceDirectory(namespace: string): string {
  if (namespace === "") return "%";
  const encoded = encodeURIComponent(namespace);
  return encoded.startsWith(".") ? `%2E${encoded.slice(1)}` : encoded;
}

/**
 * An alarm index in a directory: `<directory>/<namespace>/<id>.json` holds `{ atMs, name }`,
 * replaced atomically (write, then rename).
 */
export function directoryAlarmIndex(directory: string): AlarmIndex {
  // Loaded on first use, so that the browser build (which has no file system) can carry this module.
  let fsModule: Promise<typeof import("node:fs/promises")> | undefined;
  const fs = () => {
    fsModule ??= import("node:fs/promises");
    return fsModule;
  };
  const base = directory.endsWith("/") ? directory.slice(0, -1) : directory;
  const dirOf = (namespace: string) => `${base}/${namespaceDirectory(namespace)}`;
  let tmp = 0;
  return {
    async set(namespace, object, atMs) {
      const { mkdir, rename, rm, writeFile } = await fs();
      const file = `${dirOf(namespace)}/${object.id}.json`;
      if (atMs === null) {
        await rm(file, { force: true });
        return;
      }
      await mkdir(dirOf(namespace), { recursive: true });
      const temporary = `${dirOf(namespace)}/.${object.id}.${process.pid}.${++tmp}.tmp`;
      await writeFile(temporary, JSON.stringify({ atMs, ...(object.name === undefined ? {} : { name: object.name }) }));
      await rename(temporary, file);
    },
    async list(namespace, wanted) {
      const { readdir, readFile } = await fs();
      let names: string[];
      try {
        names = await readdir(dirOf(namespace));
      } catch {
        return [];
      }
      const out: AlarmIndexEntry[] = [];
      for (const file of names) {
        const m = /^([0-9a-f]{64})\.json$/.exec(file);
        if (m === null || wanted?.(m[1] as string) === false) continue;
        const entry = await readFile(`${dirOf(namespace)}/${file}`, "utf8").then(
          (text) => parseEntry(m[1] as string, text),
          () => null,
        );
        if (entry !== null) out.push(entry);
      }
      return out;
    },
  };
}

/** Parses one stored entry (`{ atMs, name? }`); `null` when it is not one. @internal */
export function parseEntry(id: string, text: string): AlarmIndexEntry | null {
  try {
    const v = JSON.parse(text) as { atMs?: unknown; name?: unknown };
    if (typeof v.atMs !== "number" || !Number.isFinite(v.atMs)) return null;
    return { id, atMs: v.atMs, ...(typeof v.name === "string" ? { name: v.name } : {}) };
  } catch {
    return null;
  }
}

/**
 * Wraps an object's persistence so that an append whose records change the alarm resolves only once
 * `update(atMs)` (the index write) has resolved too. Updates run one at a time, in commit order; one
 * that deletes the alarm (`null`) waits for its append and is not made if the append fails.
 * Everything else goes straight to `adapter`. @internal
 */
export function withAlarmIndex(
  adapter: PersistenceAdapter,
  update: (atMs: number | null) => Promise<void>,
): PersistenceAdapter {
  let chain: Promise<void> = Promise.resolve();
  const append = (records: readonly CommitRecord[]): Promise<void> => {
    let alarm: number | null | undefined;
    for (const r of records) if (r.alarm !== undefined) alarm = r.alarm;
    const appended = adapter.append(records);
    if (alarm === undefined) return appended;
    const atMs = alarm;
    // A new alarm is indexed beside the append: if the append fails after landing, the index holds
    // more than is pending, which costs one wake-up. A deleted alarm is unindexed only once the
    // append succeeded: a failed commit (a fenced holder's, one the store refused) leaves the alarm
    // stored, and deleting its entry would leave a pending alarm no restarted host wakes.
    const indexed = chain.then(() => (atMs === null ? appended.then(() => update(atMs)) : update(atMs)));
    chain = indexed.catch(() => {});
    return Promise.all([appended, indexed]).then(() => undefined);
  };
  return new Proxy(adapter, {
    get(target, property) {
      if (property === "append") return append;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
