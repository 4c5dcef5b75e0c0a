/**
 * The file adapter under file system faults, through ObjectStorage: one fault per run at a random
 * call of its kind, while batches commit, snapshots (full images and deltas) are written, retention
 * prunes and thins, and restores are requested:
 *
 * - `short`: a write or writev writes half of what it was given and says so (a legal short write);
 * - `enospc`: it writes half, then fails with ENOSPC (a disk filling up mid-write);
 * - `eio-sync`: an fsync or fdatasync (of a file or a directory) fails with EIO;
 * - `eio-rename`, `eio-rm`: a rename or a removal fails with EIO.
 *
 * Whatever fails, the state an open finds is the last confirmed one or the one the failed write led
 * to, whole (a batch, or a restore request that may have landed); a recorded restore is applied by
 * the next open; after the fault, every bookmark of a confirmed state still in the window restores
 * exactly that state. `FAULT_RUNS=200 npx vitest run test/durability/fs-faults.test.ts` runs longer.
 *
 * Which call a random countdown reaches depends on how background snapshot work interleaves with
 * the commits, so a random run may land its fault where it is absorbed. Two more runs aim theirs at
 * the commit path itself (a log segment's write or its fdatasync), where the fault must break the
 * storage: those are the runs that show a broken storage reopening to a confirmed state.
 */
import { join } from "node:path";
import { afterAll, describe, expect, test, vi } from "vitest";

type Kind = "short" | "enospc" | "eio-sync" | "eio-rename" | "eio-rm";
const plan: {
  countdown: number;
  kind: Kind;
  only: RegExp | undefined;
  /** Opening with O_DSYNC fails with EINVAL (as on a file system that refuses it): every log write is fdatasync'ed. */
  refuseDsync: boolean;
  hit: string | undefined;
  calls: number;
} = {
  countdown: -1,
  kind: "short",
  only: undefined,
  refuseDsync: false,
  hit: undefined,
  calls: 0,
};
function due(op: string, kinds: Kind[]): boolean {
  if (plan.countdown < 0 || !kinds.includes(plan.kind)) return false;
  if (plan.only !== undefined && !plan.only.test(op)) return false;
  plan.calls++;
  if (plan.countdown-- === 0) {
    plan.hit = op;
    plan.countdown = -1;
    return true;
  }
  return false;
}
const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
const eio = (op: string) => Object.assign(new Error(`EIO: i/o error, ${op}`), { code: "EIO" });

vi.mock("node:fs/promises", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs/promises")>();
  const open: typeof fs.open = async (...args) => {
    const flags = args[1];
    if (plan.refuseDsync && typeof flags === "number" && (flags & fs.constants.O_DSYNC) !== 0)
      throw Object.assign(new Error("EINVAL: invalid argument, open"), { code: "EINVAL" });
    const handle = await fs.open(...args);
    const path = String(args[0]);
    const write = handle.write.bind(handle) as (
      ...a: unknown[]
    ) => Promise<{ bytesWritten: number; buffer: Uint8Array }>;
    const writev = handle.writev.bind(handle);
    const sync = handle.sync.bind(handle);
    const datasync = handle.datasync.bind(handle);
    (handle as { write: unknown }).write = async (
      buffer: Uint8Array,
      offset?: number,
      length?: number,
      position?: number,
    ) => {
      const len = length ?? buffer.length - (offset ?? 0);
      if (len > 1 && due(`write ${path}`, ["short", "enospc"])) {
        const half = Math.max(1, len >> 1);
        const r = await write(buffer, offset ?? 0, half, position);
        if (plan.kind === "enospc") throw enospc();
        return r;
      }
      return write(buffer, offset, length, position);
    };
    (handle as { writev: unknown }).writev = async (buffers: Uint8Array[], position?: number) => {
      const total = buffers.reduce((n, b) => n + b.length, 0);
      if (total > 1 && due(`writev ${path}`, ["short", "enospc"])) {
        const first = buffers[0] as Uint8Array;
        const part = first.subarray(0, Math.max(1, first.length >> 1));
        const r = await writev([part], position);
        if (plan.kind === "enospc") throw enospc();
        return { bytesWritten: r.bytesWritten, buffers };
      }
      return writev(buffers, position);
    };
    handle.sync = async () => {
      if (due(`sync ${path}`, ["eio-sync"])) throw eio("fsync");
      return sync();
    };
    handle.datasync = async () => {
      if (due(`datasync ${path}`, ["eio-sync"])) throw eio("fdatasync");
      return datasync();
    };
    return handle;
  };
  const rename: typeof fs.rename = async (a, b) => {
    if (due(`rename ${String(b)}`, ["eio-rename"])) throw eio("rename");
    return fs.rename(a, b);
  };
  const rm: typeof fs.rm = async (p, o) => {
    if (due(`rm ${String(p)}`, ["eio-rm"])) throw eio("unlink");
    return fs.rm(p, o);
  };
  const writeFile: typeof fs.writeFile = async (...args) => {
    if (due(`writeFile ${String(args[0])}`, ["enospc"])) throw enospc();
    return fs.writeFile(...args);
  };
  const mocked = { ...fs, open, rename, rm, writeFile };
  return { ...mocked, default: mocked };
});

const { mkdtemp, rm } = await import("node:fs/promises");
const { tmpdir } = await import("node:os");
const { openFilePersistence } = await import("../../src/durability/file-persistence");
const { setDeltaLimits } = await import("../../src/durability/snapshot-delta");
const { ObjectStorage } = await import("../../src/storage/object-storage");
const { FakeClock, nextTurn } = await import("../../src/util/clock");
const { SplitMix64 } = await import("../../src/util/prng");
const { stateHash } = await import("../crash/pitr-state");

const root = await mkdtemp(join(tmpdir(), "actorstore-fs-faults-"));
afterAll(async () => {
  plan.countdown = -1;
  plan.refuseDsync = false;
  await rm(root, { recursive: true, force: true });
});

type Storage = Awaited<ReturnType<typeof ObjectStorage.open>>;

describe("file adapter under file system faults", () => {
  test("short writes, ENOSPC, EIO: every open finds a confirmed state (or the failed write whole), bookmarks restore exactly", async () => {
    const RUNS = Number(process.env.FAULT_RUNS ?? 10);
    const kinds: Kind[] = ["short", "enospc", "eio-sync", "eio-rename", "eio-rm"];
    /** The aimed runs after the random ones: a fault on the commit path must break the storage. */
    const aimed: Array<{ kind: Kind; only: RegExp; refuseDsync?: boolean }> = [
      { kind: "enospc", only: /^writev? .*log-\d+\.seg$/ },
      { kind: "eio-sync", only: /^datasync .*log-\d+\.seg$/, refuseDsync: true },
    ];
    const problems: string[] = [];
    let hits = 0;
    let broke = 0;
    let aimedBroke = 0;
    let restores = 0;
    for (let run = 0; run < RUNS + aimed.length; run++) {
      const aim = run >= RUNS ? aimed[run - RUNS] : undefined;
      const brokeBefore = broke;
      const r = new SplitMix64();
      r.reseed(run, 11);
      const next = (below: number) => Number(BigInt.asUintN(32, r.nextInt64()) % BigInt(below));
      // Odd runs write most snapshots as deltas.
      setDeltaLimits(run % 2 === 1 ? { chain: 6, fraction: 8 } : undefined);
      const dir = join(root, `run-${run}`);
      const clock = new FakeClock(1_700_000_000_000);
      const snapshotEveryRecords = 4 + next(5);
      const options = async () => ({
        persistence: await openFilePersistence(dir, { segmentBytes: 2048 }),
        snapshotEveryRecords,
        retentionMs: 200,
        clock,
      });
      plan.kind = aim?.kind ?? (kinds[run % kinds.length] as Kind);
      plan.only = aim?.only;
      plan.refuseDsync = aim?.refuseDsync ?? false;
      plan.hit = undefined;
      let storage: Storage = await ObjectStorage.open(await options());
      storage.sql.exec("CREATE TABLE t (n INTEGER PRIMARY KEY, v BLOB)");
      await storage.sync();
      let current = await stateHash(storage);
      const stateOf = new Map<string, string>();
      plan.calls = 0;
      plan.countdown = aim
        ? 3 + next(8)
        : next({ short: 80, enospc: 80, "eio-sync": 40, "eio-rename": 12, "eio-rm": 20 }[plan.kind]);
      const where = () => `run ${run} (${plan.kind} at ${plan.hit ?? "no call"})`;
      /** Opens again after a failure; the state must be one of `allowed`. */
      const reopen = async (cause: unknown, allowed: Array<string | undefined>): Promise<boolean> => {
        broke++;
        await storage.close().catch(() => {});
        try {
          storage = await ObjectStorage.open(await options());
        } catch (first) {
          // The fault hit the open itself (clearing an applied restore request, cutting a torn
          // tail): it fails and keeps everything for the next open, which the fault has passed.
          try {
            storage = await ObjectStorage.open(await options());
          } catch (e) {
            problems.push(
              `${where()}: two opens after "${(cause as Error).message}" failed: ${(first as Error).message}; ${(e as Error).message}`,
            );
            return false;
          }
        }
        const found = await stateHash(storage);
        if (!allowed.includes(found))
          problems.push(`${where()}: after "${(cause as Error).message}" an open found a state never confirmed`);
        current = found;
        return true;
      };
      let alive = true;
      for (let n = 1; n <= 60 && alive; n++) {
        await clock.advance(7);
        const known = [...stateOf.keys()];
        if (next(12) === 0 && known.length > 0) {
          // A restore request: recorded, it is applied by the next open; refused, it may have landed.
          const bookmark = known[next(known.length)] as string;
          const target = stateOf.get(bookmark);
          try {
            await storage.onNextSessionRestoreBookmark(bookmark);
          } catch (e) {
            if ((e as { code?: string }).code === "ERR_BOOKMARK") continue; // pruned
            // The caller was told the request failed and writes on: what this session confirms
            // now must never be undone by that request.
            let written: string | undefined;
            try {
              void storage.put("after-refused-request", n).catch(() => {});
              written = await stateHash(storage);
              await storage.sync();
            } catch {
              alive = await reopen(e, [current, target, written]);
              continue;
            }
            current = written;
            alive = await reopen(e, [current]);
            continue;
          }
          restores++;
          await storage.close().catch(() => {});
          alive = await reopen(new Error("a recorded restore"), [target]);
          broke--; // not a failure
          continue;
        }
        let pending: string | undefined;
        try {
          storage.sql.exec("INSERT INTO t VALUES (?, randomblob(?))", n, next(600));
          void storage.put({ [`a${n}`]: n, last: n }).catch(() => {});
          if (next(8) === 0) void storage.setAlarm(1_800_000_000_000 + n).catch(() => {});
          pending = await stateHash(storage);
          await storage.sync();
          current = pending;
          stateOf.set(await storage.getCurrentBookmark(), current);
        } catch (e) {
          alive = await reopen(e, [current, pending]);
        }
        await nextTurn();
      }
      if (plan.hit !== undefined) hits++;
      plan.countdown = -1;
      plan.only = undefined;
      plan.refuseDsync = false;
      if (aim && broke > brokeBefore) aimedBroke++;
      else if (aim) problems.push(`${where()}: a fault on the commit path did not break the storage`);
      if (!alive) continue;
      await storage.close().catch((e: unknown) => problems.push(`${where()}: close failed: ${(e as Error).message}`));
      let s: Storage;
      try {
        s = await ObjectStorage.open(await options());
      } catch (e) {
        problems.push(`${where()}: the last open failed: ${(e as Error).message}`);
        continue;
      }
      if ((await stateHash(s)) !== current) problems.push(`${where()}: the last open found another state`);
      // The newest bookmarks (the window is short) restore exactly their states.
      for (const [bookmark, state] of [...stateOf].slice(-4)) {
        try {
          await s.onNextSessionRestoreBookmark(bookmark);
        } catch (e) {
          expect(e, where()).toMatchObject({ code: "ERR_BOOKMARK" });
          continue;
        }
        await s.close();
        s = await ObjectStorage.open(await options());
        if ((await stateHash(s)) !== state) problems.push(`${where()}: bookmark ${bookmark} restored another state`);
      }
      await s.close();
    }
    setDeltaLimits(undefined);
    expect(problems).toEqual([]);
    // The faults did hit (a random one may be absorbed: a short write finished, a failed snapshot,
    // prune or thinning retried later), and each aimed one broke the storage.
    expect(hits).toBeGreaterThanOrEqual(Math.floor(RUNS / 3) + aimed.length);
    expect(aimedBroke).toBe(aimed.length);
    expect(restores).toBeGreaterThan(0);
  }, 600_000);
});
