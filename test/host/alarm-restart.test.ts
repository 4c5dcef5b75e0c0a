import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test, vi } from "vitest";
import { DurableObject } from "../../src/context/durable-object";
import { FaultyPersistence } from "../../src/durability/faulty-persistence";
import { type AlarmIndex, directoryAlarmIndex, memoryAlarmIndex } from "../../src/host/alarm-index";
import { ObjectHost } from "../../src/host/object-host";
import {
  directoryPerObject,
  indexOf,
  memoryPerObject,
  type PersistenceFactory,
  withIndex,
} from "../../src/host/options";
import { FakeClock } from "../../src/util/clock";

const T0 = Date.UTC(2026, 0, 1);

class Sleeper extends DurableObject {
  async touch(): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    return n;
  }
  async armAt(ms: number): Promise<void> {
    await this.ctx.storage.setAlarm(ms);
  }
  async disarm(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
  }
  async bookmark(): Promise<string> {
    return this.ctx.storage.getCurrentBookmark();
  }
  /** Asks for `bookmark` to be restored and ends the session, as the platform's docs recommend. */
  async restoreTo(bookmark: string): Promise<void> {
    await this.ctx.storage.onNextSessionRestoreBookmark(bookmark);
    this.ctx.abort();
  }
  async alarmAt(): Promise<number | null> {
    return this.ctx.storage.getAlarm();
  }
  override async alarm(): Promise<void> {
    const fired = (await this.ctx.storage.get<number[]>("fired")) ?? [];
    await this.ctx.storage.put("fired", [...fired, Date.now()]);
  }
  async fired(): Promise<number> {
    return ((await this.ctx.storage.get<number[]>("fired")) ?? []).length;
  }
  whoAmI(): string | undefined {
    return this.ctx.id.name;
  }
}

const dirs: string[] = [];
const hosts: ObjectHost[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

function startHost(persistence: PersistenceFactory, clock: FakeClock, alarmIndex?: AlarmIndex | false) {
  const host = new ObjectHost({
    namespaces: { SLEEPER: Sleeper },
    persistence,
    clock,
    idleTimeoutMs: 5_000,
    ...(alarmIndex === undefined ? {} : { alarmIndex }),
  });
  hosts.push(host as unknown as ObjectHost);
  return host;
}

describe("alarms after a host restart: the alarm index", () => {
  test("a restarted host (directory per object) wakes exactly the objects with pending alarms, when they are due", async () => {
    const root = await mkdtemp(join(tmpdir(), "actorstore-alarm-index-"));
    dirs.push(root);
    const clock = new FakeClock(T0);
    const first = startHost(directoryPerObject(root), clock);
    // Twenty objects without alarms, two with, one whose alarm is set then deleted.
    for (let i = 0; i < 20; i++) await first.env.SLEEPER.getByName(`plain-${i}`).touch();
    await first.env.SLEEPER.getByName("soon").armAt(T0 + 60_000);
    await first.env.SLEEPER.getByName("later").armAt(T0 + 120_000);
    await first.env.SLEEPER.getByName("cancelled").armAt(T0 + 30_000);
    await first.env.SLEEPER.getByName("cancelled").disarm();
    await first.close();
    hosts.splice(0);

    const index = await directoryAlarmIndex(join(root, ".alarms")).list("SLEEPER");
    expect(index.map((e) => [e.name, e.atMs]).sort()).toEqual([
      ["later", T0 + 120_000],
      ["soon", T0 + 60_000],
    ]);

    // The restart: a new host over the same directory, nothing sent to it.
    const second = startHost(directoryPerObject(root), clock);
    await second.settled();
    expect(second.stats()).toMatchObject({ live: 0, sleeping: 2, starts: 0 });
    expect(
      second
        .objects()
        .map((o) => [o.name, o.state, o.alarmAtMs])
        .sort(),
    ).toEqual([
      ["later", "sleeping", T0 + 120_000],
      ["soon", "sleeping", T0 + 60_000],
    ]);
    await clock.advance(59_000);
    expect(second.stats()).toMatchObject({ starts: 0, alarmWakes: 0 });
    await clock.advance(1_000);
    await vi.waitFor(async () => {
      await second.settled();
      expect(second.stats()).toMatchObject({ starts: 1, alarmWakes: 1 });
    });
    // The alarm ran (once) and its index entry is gone; the woken object has its name.
    await vi.waitFor(async () => {
      await clock.advance(0);
      expect(await second.env.SLEEPER.getByName("soon").fired()).toBe(1);
    });
    await vi.waitFor(async () => {
      await clock.advance(0);
      expect((await directoryAlarmIndex(join(root, ".alarms")).list("SLEEPER")).map((e) => e.name)).toEqual(["later"]);
    });
    expect(await second.env.SLEEPER.getByName("soon").whoAmI()).toBe("soon");
    await clock.advance(60_000);
    await vi.waitFor(async () => {
      await second.settled();
      expect(second.stats()).toMatchObject({ alarmWakes: 2 });
    });
    await vi.waitFor(async () => {
      await clock.advance(0);
      expect(await second.env.SLEEPER.getByName("later").fired()).toBe(1);
    });
    // Only the two objects with alarms were ever started by the host itself.
    expect(second.stats().starts).toBe(2);
    await vi.waitFor(async () => {
      await clock.advance(0);
      expect(await directoryAlarmIndex(join(root, ".alarms")).list("SLEEPER")).toEqual([]);
    });
  });

  test("an alarm already due when the host starts fires at once; a stale index entry is removed after one wake", async () => {
    const clock = new FakeClock(T0);
    const factory = memoryPerObject();
    const first = startHost(factory, clock);
    await first.env.SLEEPER.getByName("due").armAt(T0 + 10_000);
    await first.close();
    hosts.splice(0);
    // The machine was down past the alarm's time.
    clock.set(T0 + 3_600_000);
    // A stale entry: an object that has no alarm at all.
    const stale = first.env.SLEEPER.idFromName("stale");
    await indexOf(factory)?.set("SLEEPER", { id: stale.toString(), name: "stale" }, T0 + 3_600_000);
    const second = startHost(factory, clock);
    await second.settled();
    await vi.waitFor(async () => {
      await clock.advance(0);
      await second.settled();
      expect(second.stats().alarmWakes).toBe(2);
    });
    expect(await second.env.SLEEPER.getByName("due").fired()).toBe(1);
    expect(await second.env.SLEEPER.getByName("stale").fired()).toBe(0);
    await vi.waitFor(async () => {
      await clock.advance(0);
      expect(await indexOf(factory)?.list("SLEEPER")).toEqual([]);
    });
    // A second restart: the stale entry and the fired one are gone, nothing is woken.
    const third = startHost(factory, clock);
    await third.settled();
    expect(third.stats()).toMatchObject({ sleeping: 0 });
  });

  test("an alarm that a point-in-time restore brings back is in the index, and a restarted host fires it", async () => {
    // Regression: the restore's commit said nothing about the alarm, so the index kept what the
    // state before the restore had (here: none) and a restarted host never woke the object.
    const root = await mkdtemp(join(tmpdir(), "actorstore-alarm-index-"));
    dirs.push(root);
    const clock = new FakeClock(T0);
    const first = startHost(directoryPerObject(root), clock);
    const stub = () => first.env.SLEEPER.getByName("restored");
    await stub().armAt(T0 + 60_000);
    const armed = await stub().bookmark();
    await stub().disarm();
    await expect(stub().restoreTo(armed)).rejects.toThrow(/abort/);
    expect(await stub().alarmAt()).toBe(T0 + 60_000);
    await first.close();
    hosts.splice(0);
    const index = directoryAlarmIndex(join(root, ".alarms"));
    expect((await index.list("SLEEPER")).map((e) => [e.name, e.atMs])).toEqual([["restored", T0 + 60_000]]);

    const second = startHost(directoryPerObject(root), clock);
    await second.settled();
    expect(second.stats()).toMatchObject({ live: 0, sleeping: 1, starts: 0 });
    await clock.advance(60_000);
    await vi.waitFor(async () => {
      await clock.advance(0);
      await second.settled();
      expect(second.stats()).toMatchObject({ alarmWakes: 1 });
    });
    await vi.waitFor(async () => {
      await clock.advance(0);
      expect(await second.env.SLEEPER.getByName("restored").fired()).toBe(1);
    });
  });

  test("a point-in-time restore to a state without an alarm removes the index entry", async () => {
    const clock = new FakeClock(T0);
    const factory = memoryPerObject();
    const host = startHost(factory, clock);
    const stub = () => host.env.SLEEPER.getByName("cleared");
    const unarmed = await stub().bookmark();
    await stub().armAt(T0 + 60_000);
    expect((await indexOf(factory)?.list("SLEEPER"))?.map((e) => e.name)).toEqual(["cleared"]);
    await expect(stub().restoreTo(unarmed)).rejects.toThrow(/abort/);
    expect(await stub().alarmAt()).toBeNull();
    expect(await indexOf(factory)?.list("SLEEPER")).toEqual([]);
  });

  test("a commit that sets the alarm is confirmed only once the index has it (so a crash right after cannot lose it)", async () => {
    const clock = new FakeClock(T0);
    const inner = memoryAlarmIndex();
    let release: (() => void) | undefined;
    const held: AlarmIndex = {
      list: (ns) => inner.list(ns),
      set: async (ns, object, atMs) => {
        await new Promise<void>((r) => {
          release = r;
        });
        await inner.set(ns, object, atMs);
      },
    };
    const host = startHost(memoryPerObject(), clock, held);
    let confirmed = false;
    const call = host.env.SLEEPER.getByName("x")
      .armAt(T0 + 5_000)
      .then(() => {
        confirmed = true;
      });
    await vi.waitFor(() => expect(release).toBeDefined());
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(confirmed).toBe(false);
    release?.();
    await call;
    expect((await inner.list("SLEEPER")).map((e) => e.name)).toEqual(["x"]);
  });

  test("a commit that deletes the alarm and fails leaves the index entry: the alarm is still stored, and a restarted host fires it", async () => {
    // Regression: the index update ran beside the append, so the entry was deleted although the
    // commit failed and the object reopened with its alarm still pending; a host restarted then
    // never woke it. (In a cluster: a fenced host's refused commit deleted the entry of an alarm
    // its new holder had.)
    const clock = new FakeClock(T0);
    const base = memoryPerObject();
    let faulty: FaultyPersistence | undefined;
    const factory = withIndex(
      async (id, namespace) => (faulty = new FaultyPersistence(await base(id, namespace))),
      indexOf(base) as AlarmIndex,
    );
    const first = startHost(factory, clock);
    const stub = () => first.env.SLEEPER.getByName("kept");
    await stub().armAt(T0 + 60_000);
    faulty?.failNextAppend();
    await expect(stub().disarm()).rejects.toThrow();
    expect(await stub().alarmAt()).toBe(T0 + 60_000);
    expect((await indexOf(base)?.list("SLEEPER"))?.map((e) => [e.name, e.atMs])).toEqual([["kept", T0 + 60_000]]);
    await first.close();
    hosts.splice(0);

    const second = startHost(factory, clock);
    await second.settled();
    await clock.advance(60_000);
    await vi.waitFor(async () => {
      await clock.advance(0);
      await second.settled();
      expect(await second.env.SLEEPER.getByName("kept").fired()).toBe(1);
    });
    // A delete that is confirmed still removes the entry.
    await second.env.SLEEPER.getByName("kept").armAt(T0 + 200_000);
    await second.env.SLEEPER.getByName("kept").disarm();
    expect(await indexOf(base)?.list("SLEEPER")).toEqual([]);
  });

  test("alarmIndex: false keeps no index; a malformed one is a TypeError naming the option", async () => {
    const clock = new FakeClock(T0);
    const factory = memoryPerObject();
    const first = startHost(factory, clock, false);
    await first.env.SLEEPER.getByName("x").armAt(T0 + 5_000);
    await first.close();
    hosts.splice(0);
    const second = startHost(factory, clock);
    await second.settled();
    expect(second.stats().sleeping).toBe(0);
    expect(() => new ObjectHost({ namespaces: { SLEEPER: Sleeper }, alarmIndex: {} as unknown as AlarmIndex })).toThrow(
      /option "alarmIndex"/,
    );
  });

  test("an index that cannot be read is read again in a minute, once however many namespaces failed, and close() cancels that", async () => {
    const clock = new FakeClock(T0);
    let failing = true;
    const reads: string[] = [];
    const inner = memoryAlarmIndex();
    const index: AlarmIndex = {
      set: (namespace, id, entry) => inner.set(namespace, id, entry),
      async list(namespace) {
        reads.push(namespace);
        if (failing) throw new Error("index unreadable");
        return inner.list(namespace);
      },
    };
    const host = new ObjectHost({ namespaces: { A: Sleeper, B: Sleeper }, clock, alarmIndex: index });
    hosts.push(host as unknown as ObjectHost);
    await host.settled();
    expect(reads).toEqual(["A", "B"]);
    expect(host.stats().alarmIndexErrors).toBe(2);
    expect(clock.pendingTimers).toBe(1);
    failing = false;
    await clock.advance(60_000);
    await host.settled();
    expect(reads).toEqual(["A", "B", "A", "B"]);
    expect(clock.pendingTimers).toBe(0);

    failing = true;
    const again = new ObjectHost({ namespaces: { A: Sleeper, B: Sleeper }, clock, alarmIndex: index });
    await again.settled();
    expect(clock.pendingTimers).toBe(1);
    await again.close();
    expect(clock.pendingTimers).toBe(0);
  });
});

describe("directoryPerObject: namespace names", () => {
  test('binding names "..", ".", "", ".alarms" stay inside the root, apart from each other and from the alarm index', async () => {
    // Regression: the namespace's directory was its URI-encoded name, which leaves "." alone: a
    // binding named ".." wrote its objects beside the root, "." and "" shared the root itself, and
    // ".alarms" shared the alarm index's directory.
    const outer = await mkdtemp(join(tmpdir(), "actorstore-ns-names-"));
    dirs.push(outer);
    const root = join(outer, "root");
    const clock = new FakeClock(T0);
    const names = ["..", ".", "", ".alarms", "ok"];
    const open = () => {
      const host = new ObjectHost({
        namespaces: Object.fromEntries(names.map((n) => [n, Sleeper])),
        persistence: directoryPerObject(root),
        clock,
        idleTimeoutMs: 5_000,
      });
      hosts.push(host as unknown as ObjectHost);
      return host as unknown as { env: Record<string, typeof host.env.SLEEPER>; close(): Promise<void> };
    };
    const first = open();
    for (const [i, n] of names.entries()) {
      const stub = first.env[n]?.getByName("same");
      for (let k = 0; k <= i; k++) await stub?.touch();
      await stub?.armAt(T0 + 60_000 + i);
    }
    await first.close();
    hosts.splice(0);
    expect(await readdir(outer)).toEqual(["root"]);
    expect((await readdir(root)).sort()).toEqual(["%", "%2E", "%2E.", "%2Ealarms", ".alarms", "ok"].sort());

    const second = open();
    for (const [i, n] of names.entries()) {
      // Each namespace kept its own object: touched i + 1 times before, once now.
      expect(await second.env[n]?.getByName("same").touch()).toBe(i + 2);
      expect(await second.env[n]?.getByName("same").alarmAt()).toBe(T0 + 60_000 + i);
    }
  });
});
