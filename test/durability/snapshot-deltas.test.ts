/**
 * Incremental snapshots (snapshot-delta.ts): a delta holds the chunks of the database file that
 * changed since its base snapshot. Tested as an attacker would: the engine's change marks against
 * the bytes, the file format against damage, random workloads with full and delta snapshots at
 * random points (restart, abort and restore compared by full logical dumps), bit flips in every file
 * of a chain, an interrupted delta write, and pruning and thinning that must never delete a base a
 * kept delta needs.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it, test } from "vitest";
import { runInspect } from "../../src/cli/inspect-commands";
import {
  offThreadCrcAnswers,
  offThreadCrcChecks,
  offThreadCrcFiles,
  setOffThreadCrcFromBytes,
} from "../../src/durability/crc-off-thread";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { loadWithRecords } from "../../src/durability/persistence";
import {
  applyDelta,
  chainOf,
  deletableInChains,
  deltaFits,
  encodeDelta,
  fallbackSeq,
  MAX_DELTA_CHAIN,
  parseDeltaHeader,
  setDeltaLimits,
} from "../../src/durability/snapshot-delta";
import type { FrozenImage } from "../../src/engine/engine";
import { loadSqlJsEngine } from "../../src/engine/sqljs";
import { PagedFile } from "../../src/engine/sqljs-paged-file";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { contents, flipBit } from "./directory-files";
import { dumpStorage, type StorageDump } from "./dump";
import { pitrProperty } from "./pitr-workload";

const root = await mkdtemp(join(tmpdir(), "actorstore-deltas-"));
let counter = 0;
const freshDir = () => join(root, `d-${++counter}`);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The snapshots of a directory listing as the chain rules see them. */
const heldOf = (names: readonly string[]) =>
  names
    .filter((n) => n.startsWith("snap-"))
    .map((name) => ({
      name,
      seq: Number(name.slice(5, 21)),
      baseSeq: name.endsWith(".delta") ? Number(name.slice(-22, -6)) : undefined,
      bytes: 0,
    }))
    .sort((a, b) => a.seq - b.seq);

const concatParts = (parts: readonly Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

describe("the delta format and chain rules", () => {
  it("round-trips any delta and applies it as the image it describes", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.uint8Array({ maxLength: 600 }),
        fc.integer({ min: 0, max: 700 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.nat(),
        (chunkBytes, base, newLength, picks, salt) => {
          // The next image: the base resized, then some chunks rewritten.
          const next = new Uint8Array(newLength);
          next.set(base.subarray(0, newLength));
          const count = Math.ceil(newLength / chunkBytes);
          const indexes = [...new Set(picks.filter(() => count > 0).map((p) => p % count))].sort((a, b) => a - b);
          // Growth beyond the base is always part of a delta (the schedule adds those chunks).
          for (let i = Math.floor(base.length / chunkBytes); i < count; i++) if (!indexes.includes(i)) indexes.push(i);
          indexes.sort((a, b) => a - b);
          for (const i of indexes)
            for (let b = i * chunkBytes; b < Math.min(newLength, (i + 1) * chunkBytes); b++)
              next[b] = (b * 31 + salt) & 255;
          const chunks = indexes.map((index) => ({
            index,
            bytes: next.slice(index * chunkBytes, Math.min(newLength, (index + 1) * chunkBytes)),
          }));
          const file = concatParts(
            encodeDelta(9, 0xdeadbeef, { baseSeq: 4, byteLength: newLength, chunkBytes, chunks }),
          );
          const header = parseDeltaHeader(file, file.length);
          if (typeof header === "string") throw new Error(header);
          expect(header).toMatchObject({ seq: 9, baseSeq: 4, baseCrc: 0xdeadbeef, chunkBytes, byteLength: newLength });
          const image = new Uint8Array(Math.max(base.length, newLength));
          image.set(base);
          const length = applyDelta(image, base.length, file, header);
          expect(image.subarray(0, length)).toEqual(next);
          // Bytes past a shrunk image are zeros (a later growth reads zeros there).
          expect(image.subarray(length).every((b) => b === 0)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  }, 120_000);

  it("refuses a header that does not describe its file exactly, naming the offset", () => {
    const chunks = [{ index: 1, bytes: new Uint8Array(8).fill(7) }];
    const file = concatParts(encodeDelta(3, 1, { baseSeq: 2, byteLength: 20, chunkBytes: 8, chunks }));
    expect(typeof parseDeltaHeader(file, file.length)).toBe("object");
    expect(parseDeltaHeader(file.subarray(0, 10), 10)).toMatch(/cut short/);
    expect(parseDeltaHeader(file, file.length + 1)).toMatch(/the chunks end at byte \d+, but the file holds/);
    const wrongMagic = file.slice();
    wrongMagic[0] = 0;
    expect(parseDeltaHeader(wrongMagic, wrongMagic.length)).toMatch(/byte 0/);
    const pastEnd = file.slice();
    new DataView(pastEnd.buffer).setUint32(44, 9, true); // chunk 9 of a 20-byte image
    expect(parseDeltaHeader(pastEnd, pastEnd.length)).toMatch(/byte 44 names chunk 9/);
    const selfBased = file.slice();
    new DataView(selfBased.buffer).setFloat64(16, 3, true); // base seq = its own seq
    expect(parseDeltaHeader(selfBased, selfBased.length)).toMatch(/base seq/);
    expect(() =>
      encodeDelta(3, 1, {
        baseSeq: 2,
        byteLength: 20,
        chunkBytes: 8,
        chunks: [{ index: 2, bytes: new Uint8Array(8) }],
      }),
    ).toThrow(RangeError);
  });

  const F = (seq: number, bytes = 1000) => ({ seq, bytes });
  const D = (seq: number, baseSeq: number, bytes = 10) => ({ seq, baseSeq, bytes });

  it("follows chains, and never deletes a base a kept delta needs", () => {
    const held = [F(0), D(5, 0), D(9, 5), F(12), D(15, 12), D(20, 15), F(30)];
    expect(chainOf(held, 20)?.map((s) => s.seq)).toEqual([12, 15, 20]);
    expect(chainOf(held, 30)?.map((s) => s.seq)).toEqual([30]);
    expect(chainOf([D(5, 3)], 5)).toBeUndefined();
    // Thinning or pruning asked for everything but the newest: only what no kept one builds on.
    expect(deletableInChains(held, [0, 5, 9, 12, 15])).toEqual([15, 12, 9, 5, 0].filter((s) => s !== 15 && s !== 12));
    expect(deletableInChains(held, [12, 15]).length).toBe(0);
    expect(deletableInChains(held, [9, 20])).toEqual([20, 9]);
    // Random sets: whatever is deleted, every kept delta still has its whole chain.
    fc.assert(
      fc.property(fc.subarray(held.map((s) => s.seq)), (asked) => {
        const gone = new Set(deletableInChains(held, asked));
        const kept = held.filter((s) => !gone.has(s.seq));
        for (const s of kept) expect(chainOf(kept, s.seq)).toBeDefined();
      }),
    );
  });

  it("keeps the log a fallback needs: past the newest chain's full image", () => {
    expect(fallbackSeq([F(0), D(5, 0), D(9, 5)])).toBe(5);
    expect(fallbackSeq([F(0), D(5, 0), F(12), D(15, 12), D(20, 15)])).toBe(5);
    expect(fallbackSeq([F(0), F(12)])).toBe(0);
    expect(fallbackSeq([F(12), D(15, 12)])).toBe(12);
    expect(fallbackSeq([F(12)])).toBeUndefined();
  });

  it("writes a full image again once the chain is long or an open would read over 1.25× the image", () => {
    // Rewrites of the same image: 1000 + 100 + 100 + 50 = 1250 = 1.25 × 1000 is the most.
    const chain = [F(0, 1000), D(1, 0, 100), D(2, 1, 100)];
    expect(deltaFits(chain, 50, 1000)).toBe(true);
    expect(deltaFits(chain, 51, 1000)).toBe(false);
    // Growth: deltas of new chunks only; the open reads about the image.
    const grown = [F(0, 1000), D(1, 0, 500), D(2, 1, 500)];
    expect(deltaFits(grown, 500, 2500)).toBe(true);
    const long = [F(0, 1e9), ...Array.from({ length: MAX_DELTA_CHAIN }, (_, i) => D(i + 1, i, 1))];
    expect(deltaFits(long.slice(0, MAX_DELTA_CHAIN), 1, 1e9)).toBe(true);
    expect(deltaFits(long, 1, 1e9)).toBe(false);
    expect(deltaFits([D(3, 2)], 1, 1e9)).toBe(false);
  });
});

describe("the paged file's change marks", () => {
  it("lists exactly the chunks written since a freeze, and nothing for a mark of replaced contents", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.tuple(fc.nat(4000), fc.integer({ min: 1, max: 300 })), { maxLength: 6 }), {
          minLength: 1,
          maxLength: 6,
        }),
        (rounds) => {
          const file = new PagedFile(1 << 20, 256);
          file.load(new Uint8Array(1024).fill(1));
          let previous = file.freeze(file.size);
          let before = file.slice(0, file.size);
          previous.release();
          for (const writes of rounds) {
            for (const [at, n] of writes) file.set(new Uint8Array(n).fill((at + n) & 255), at);
            const frozen = file.freeze(file.size, previous.mark);
            const now = concatParts(frozen.parts);
            const changed = new Set(frozen.changed);
            // Every chunk not listed is byte for byte what the previous freeze held (zeros past it).
            for (let i = 0; i < frozen.parts.length; i++) {
              if (changed.has(i)) continue;
              const old = new Uint8Array(frozen.parts[i]?.length ?? 0);
              old.set(before.subarray(i * 256, i * 256 + old.length));
              expect(frozen.parts[i]).toEqual(old);
            }
            // And every listed chunk was written.
            for (const i of changed)
              expect(writes.some(([at, n]) => at < (i + 1) * 256 && at + n > i * 256)).toBe(true);
            frozen.release();
            previous = frozen;
            before = now;
          }
          const mark = previous.mark;
          file.load(new Uint8Array(512));
          expect(file.freeze(512, mark).changed).toBeUndefined();
        },
      ),
      { numRuns: 200 },
    );
  }, 120_000);
});

describe("the engine's changed chunks against its bytes", () => {
  it("every chunk a freeze does not list holds what the previous freeze held, whatever SQL ran", async () => {
    const engines = await loadSqlJsEngine();
    const statement = fc.oneof(
      fc.integer({ min: 1, max: 150_000 }).map((n) => `INSERT INTO t (v) VALUES (randomblob(${n}))`),
      fc.integer({ min: 1, max: 3000 }).map((n) => `INSERT INTO t (v) VALUES (randomblob(${n}))`),
      fc.nat(40).map((id) => `UPDATE t SET v = randomblob(length(v) + 1) WHERE id = ${id}`),
      fc.nat(40).map((id) => `DELETE FROM t WHERE id % 7 = ${id % 7}`),
      fc.constant("CREATE INDEX IF NOT EXISTS tv ON t(length(v))"),
      fc.constant("DROP INDEX IF EXISTS tv"),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(statement, { maxLength: 5 }), { minLength: 2, maxLength: 8 }),
        async (rounds) => {
          const engine = engines.open();
          engine.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)");
          const first = engine.freezeImage?.();
          expect(first, "the engine holds its file in chunks").toBeDefined();
          if (first === undefined) return;
          let previous: FrozenImage = first;
          let before = concatParts(first.parts);
          first.release();
          for (const round of rounds) {
            for (const sql of round) engine.exec(sql);
            const frozen: FrozenImage | undefined = engine.freezeImage?.(previous.mark);
            if (frozen === undefined) break; // the file system took the file back (never for these statements)
            const listed = new Set(frozen.changed);
            expect(frozen.changed).toBeDefined();
            const size = frozen.chunkBytes as number;
            for (let i = 0; i < frozen.parts.length; i++) {
              if (listed.has(i) || i * size >= before.length) continue;
              const old = new Uint8Array(frozen.parts[i]?.length ?? 0);
              old.set(before.subarray(i * size, i * size + old.length));
              expect(frozen.parts[i], `chunk ${i}`).toEqual(old);
            }
            const now = concatParts(frozen.parts);
            // The image is the database: it opens and reads the same.
            const copy = engines.open(now.slice());
            expect(copy.query("SELECT count(*), total(length(v)) FROM t")).toEqual(
              engine.query("SELECT count(*), total(length(v)) FROM t"),
            );
            copy.close();
            frozen.release();
            previous = frozen;
            before = now;
          }
          engine.close();
        },
      ),
      { numRuns: 15 },
    );
  }, 300_000);
});

describe("incremental snapshots with the file adapter", () => {
  let limits: ReturnType<typeof setDeltaLimits> | undefined;
  afterEach(() => {
    if (limits !== undefined) setDeltaLimits(limits);
    limits = undefined;
  });
  /** Deltas even of small databases (a delta up to 8× its full image; chains of up to 4). */
  const deltasAlways = () => {
    limits = setDeltaLimits({ chain: 4, fraction: 8 });
  };

  test("property: random workloads with full and delta snapshots at random points; restarts, aborts and restores give exact dumps", async () => {
    deltasAlways();
    let deltas = 0;
    const persistence = async () => {
      const file = await openFilePersistence(freshDir(), { allowUnsyncedWrites: true, segmentBytes: 4096 });
      const write = file.writeSnapshotDelta.bind(file);
      file.writeSnapshotDelta = async (info, delta) => {
        const wrote = await write(info, delta);
        if (wrote) deltas++;
        return wrote;
      };
      return file;
    };
    await fc.assert(
      pitrProperty({ strict: true, rowidOverflow: false, persistence, bigRows: true, snapshotSteps: true }),
      { numRuns: 40 },
    );
    expect(deltas).toBeGreaterThan(10);
  }, 600_000);

  it("a growing database writes deltas under the default limits; every snapshot holds its seq's state exactly", async () => {
    const dir = freshDir();
    const persistence = await openFilePersistence(dir, { allowUnsyncedWrites: true });
    const storage = await ObjectStorage.open({ persistence, snapshotEveryRecords: 8 });
    const core = coreOf(storage);
    const rowsAt = new Map<number, unknown>();
    // The first byte of every row, weighted by its id: an update a snapshot misses shows here.
    const DIGEST =
      "SELECT count(*), total(id * instr('0123456789ABCDEF', substr(hex(substr(v, 1, 1)), 1, 1)) + id * 17 * instr('0123456789ABCDEF', substr(hex(substr(v, 1, 1)), 2, 1))) FROM g";
    let rows = 0;
    storage.sql.exec("CREATE TABLE g (id INTEGER PRIMARY KEY, v BLOB)");
    // 16 MB to start with (64 chunks): each snapshot's changes are then a few chunks of them.
    storage.sql.exec(
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 16000) INSERT INTO g (v) SELECT randomblob(1000) FROM c",
    );
    rows = 16000;
    for (let b = 0; b < 160; b++) {
      // Growth at the end of the table, and an update of an early row now and then.
      for (let j = 0; j < 20; j++) storage.sql.exec("INSERT INTO g (v) VALUES (randomblob(1000))");
      rows += 20;
      if (b % 4 === 0) storage.sql.exec("UPDATE g SET v = randomblob(1000) WHERE id = ?", 1 + ((b * 797) % rows));
      await storage.put("rows", rows);
      await storage.sync();
      rowsAt.set(core.lastSeq, core.engine.query(DIGEST));
    }
    await core.settled();
    const expected = await dumpStorage(storage);
    await storage.close();
    const names = await readdir(dir);
    expect(names.filter((n) => n.endsWith(".delta")).length).toBeGreaterThan(3);

    const reader = await openFilePersistence(dir, { readOnly: true });
    const loaded = await reader.load();
    const engines = await loadSqlJsEngine();
    let checked = 0;
    for (const s of loaded.snapshots) {
      const want = rowsAt.get(s.seq);
      if (want === undefined) continue;
      const engine = engines.open((await reader.readSnapshot(s.seq)).slice());
      expect(engine.query("PRAGMA integrity_check")[0]?.[0]).toBe("ok");
      expect(engine.query(DIGEST), `snapshot of seq ${s.seq}`).toEqual(want);
      engine.close();
      checked++;
    }
    await reader.close();
    expect(checked).toBeGreaterThan(3);
    const again = await ObjectStorage.open({ persistence: await openFilePersistence(dir) });
    expect(await dumpStorage(again)).toEqual(expected);
    await again.close();
  }, 300_000);

  describe("damage", () => {
    const template = join(root, "chain-template");
    let expected: StorageDump;
    const open = async (directory: string) =>
      ObjectStorage.open({
        persistence: await openFilePersistence(directory, { segmentBytes: 2000 }),
        snapshotEveryRecords: 12,
      });
    const copy = async () => {
      const dir = freshDir();
      await cp(template, dir, { recursive: true });
      return dir;
    };

    beforeAll(async () => {
      const previous = setDeltaLimits({ chain: 3, fraction: 8 });
      try {
        const storage = await open(template);
        storage.sql.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
        for (let i = 0; i < 120; i++) {
          storage.sql.exec("INSERT INTO t (v) VALUES (?)", `row ${i}`);
          await storage.put(`k${i % 30}`, { i });
          await storage.sync();
          // Each snapshot settles before the next commit: on a loaded machine one still in flight
          // let commits pass it by, and close() then wrote a full image, so the template no longer
          // ended in a chain with deltas (a CI run of a27e48e).
          await coreOf(storage).settled();
        }
        await storage.close();
      } finally {
        setDeltaLimits(previous);
      }
      const names = await readdir(template);
      // Several chains: full images with deltas on them.
      expect(names.filter((n) => n.endsWith(".delta")).length).toBeGreaterThan(4);
      expect(names.filter((n) => n.endsWith(".sqlite")).length).toBeGreaterThan(2);
      const reference = await open(await copy());
      expected = await dumpStorage(reference);
      await reference.close();
    });

    it("a flipped bit in any delta or full image: every confirmed commit, or ERR_CORRUPT with nothing changed", async () => {
      const snaps = (await readdir(template)).filter((n) => n.startsWith("snap-")).sort();
      const seen = { ok: 0, corrupt: 0 };
      await fc.assert(
        fc.asyncProperty(fc.nat(), fc.nat(), fc.nat(7), async (which, at, bit) => {
          const name = snaps[which % snaps.length] as string;
          const dir = await copy();
          const offset = await flipBit(dir, name, at, bit);
          const before = await contents(dir);
          const where = `${name} byte ${offset} bit ${bit}`;
          let storage: ObjectStorage;
          try {
            storage = await open(dir);
          } catch (error) {
            expect(error, where).toMatchObject({ name: "ActorStoreError", code: "ERR_CORRUPT" });
            expect(await contents(dir), where).toEqual(before);
            seen.corrupt++;
            return;
          }
          expect(await dumpStorage(storage), where).toEqual(expected);
          await storage.close();
          seen.ok++;
        }),
        { numRuns: 60 },
      );
      // The whole log is kept (retention), so every damaged chain has an older one to fall back to.
      expect(seen.ok).toBeGreaterThan(0);
    }, 300_000);

    it.each([
      ["in line", false],
      ["with every file of the chain checked off the loading thread", true],
    ])(
      "a damaged newest delta, or the full image under it, falls back to an older complete chain plus the log (%s)",
      async (_, offThread) => {
        const threshold = offThread ? setOffThreadCrcFromBytes(0) : undefined;
        try {
          const held = heldOf(await readdir(template));
          const newest = held.at(-1) as (typeof held)[number];
          const chain = chainOf(held, newest.seq) as typeof held;
          expect(chain.length, "the template ends in a chain with deltas").toBeGreaterThan(1);
          const checks = offThreadCrcChecks();
          const files = offThreadCrcFiles();
          const answers = offThreadCrcAnswers();
          const intact = await open(await copy());
          expect(await dumpStorage(intact)).toEqual(expected);
          await intact.close();
          // Every file of the chain went to the worker, and the worker itself answered.
          if (offThread) {
            expect(offThreadCrcChecks()).toBe(checks + 1);
            expect(offThreadCrcFiles()).toBe(files + chain.length);
            expect(offThreadCrcAnswers()).toBe(answers + 1);
          }
          for (const victim of [newest.name, (chain[0] as (typeof held)[number]).name]) {
            const dir = await copy();
            const bytes = await readFile(join(dir, victim));
            bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0x10;
            await writeFile(join(dir, victim), bytes);
            const before = offThreadCrcChecks();
            const storage = await open(dir);
            // Off the thread, the damaged chain was read and its check failed; the scan in line after it fell back.
            if (offThread) expect(offThreadCrcChecks()).toBe(before + 1);
            expect(await dumpStorage(storage), victim).toEqual(expected);
            await storage.close();
            expect(await readdir(dir), "the damaged file is left for a person").toContain(victim);
          }
        } finally {
          if (threshold !== undefined) setOffThreadCrcFromBytes(threshold);
        }
      },
    );

    it("a flipped bit in the newest chain: the open with its files checked off the thread ends as the one in line", async () => {
      const held = heldOf(await readdir(template));
      const chain = chainOf(held, (held.at(-1) as (typeof held)[number]).seq) as typeof held;
      const outcome = async (dir: string) => {
        try {
          const storage = await open(dir);
          const dump = await dumpStorage(storage);
          await storage.close();
          return { dump };
        } catch (error) {
          return { error: { code: (error as { code?: unknown }).code, message: (error as Error).message } };
        }
      };
      const seen = { ok: 0, corrupt: 0, offThread: 0 };
      await fc.assert(
        fc.asyncProperty(fc.nat(), fc.nat(), fc.nat(7), async (which, at, bit) => {
          const name = (chain[which % chain.length] as (typeof held)[number]).name;
          const inLine = await copy();
          const offset = await flipBit(inLine, name, at, bit);
          const offThreadDir = await copy();
          await flipBit(offThreadDir, name, offset, bit);
          const where = `${name} byte ${offset} bit ${bit}`;
          const before = await contents(offThreadDir);
          const expectedOutcome = await outcome(inLine);
          const threshold = setOffThreadCrcFromBytes(0);
          const checks = offThreadCrcChecks();
          let got: Awaited<ReturnType<typeof outcome>>;
          try {
            got = await outcome(offThreadDir);
          } finally {
            setOffThreadCrcFromBytes(threshold);
          }
          // Off the thread, unless the flip broke a delta's header: a chain whose headers do not
          // describe it is read in line (the reader that names the damage).
          const intactFile = await readFile(join(template, name));
          const header = name.endsWith(".delta") ? parseDeltaHeader(intactFile, intactFile.length) : undefined;
          const inHeader = typeof header === "object" && offset < header.dataOffset;
          if (inHeader) expect([checks, checks + 1], where).toContain(offThreadCrcChecks());
          else expect(offThreadCrcChecks(), where).toBe(checks + 1);
          if (offThreadCrcChecks() > checks) seen.offThread++;
          expect(got, where).toEqual(expectedOutcome);
          if (got.error === undefined) {
            expect(got.dump, where).toEqual(expected);
            seen.ok++;
          } else {
            expect(got.error.code, where).toBe("ERR_CORRUPT");
            expect(await contents(offThreadDir), where).toEqual(before);
            seen.corrupt++;
          }
        }),
        { numRuns: 30 },
      );
      // The whole log is kept, so a damaged newest chain always has an older one to fall back to.
      expect(seen.ok).toBe(30);
      expect(seen.offThread).toBeGreaterThan(20);
    }, 300_000);

    it("a damaged full image under the only chain, checked off the thread, with the log pruned: ERR_CORRUPT naming it", async () => {
      const dir = await copy();
      const held = heldOf(await readdir(dir));
      const newest = held.at(-1) as (typeof held)[number];
      const chain = chainOf(held, newest.seq) as typeof held;
      const full = chain[0] as (typeof held)[number];
      // Only the newest chain and the segments from the one holding the full image's commit on.
      for (const s of held) if (!chain.includes(s)) await rm(join(dir, s.name));
      const segments = (await readdir(dir)).filter((n) => n.endsWith(".seg")).sort();
      const firstSeqs = segments.map((n) => Number(n.slice(4, 20)));
      let removed = 0;
      for (let i = 0; i + 1 < segments.length; i++)
        if ((firstSeqs[i + 1] as number) - 1 < full.seq) {
          await rm(join(dir, segments[i] as string));
          removed++;
        }
      expect(removed, "the log before the full image is gone").toBeGreaterThan(0);
      const threshold = setOffThreadCrcFromBytes(0);
      try {
        const intact = await open(dir);
        expect(await dumpStorage(intact)).toEqual(expected);
        await intact.close();
        await flipBit(dir, full.name, 40_000, 3);
        const before = await contents(dir);
        const checks = offThreadCrcChecks();
        const error = await open(dir).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(offThreadCrcChecks()).toBe(checks + 1);
        expect(error).toMatchObject({ name: "ActorStoreError", code: "ERR_CORRUPT" });
        expect((error as Error).message).toContain(
          `${newest.name}: ${full.name}, which it is built on, it fails its checksum`,
        );
        expect(await contents(dir), "nothing changed").toEqual(before);
      } finally {
        setOffThreadCrcFromBytes(threshold);
      }
    });

    it("a delta write the process did not finish (a temp file) is ignored; the writer removes it, the inspector does not", async () => {
      const dir = await copy();
      const newest = (await readdir(dir))
        .filter((n) => n.endsWith(".delta"))
        .sort()
        .at(-1) as string;
      const bytes = await readFile(join(dir, newest));
      // A kill during the write leaves part of a delta under a temp name (the rename never came).
      const seq = Number(newest.slice(5, 21)) + 3;
      const tmp = `${newest.replace(/^snap-\d{16}/, `snap-${String(seq).padStart(16, "0")}`)}.tmp`;
      await writeFile(join(dir, tmp), bytes.subarray(0, bytes.length >> 1));
      const before = await contents(dir);
      const lines: string[] = [];
      const code = await runInspect([dir, "keys"], { out: (l) => lines.push(l), err: () => {} });
      expect(code).toBe(0);
      expect(lines.length).toBe(expected.kv.length);
      expect(await contents(dir), "the inspector changes nothing").toEqual(before);
      const storage = await open(dir);
      expect(await dumpStorage(storage)).toEqual(expected);
      await storage.close();
      expect(await readdir(dir)).not.toContain(tmp);
    });

    it("the inspector reads a directory whose newest snapshot is a delta, and names deltas", async () => {
      const dir = await copy();
      const before = await contents(dir);
      const err: string[] = [];
      const out: string[] = [];
      expect(await runInspect([dir, "bookmarks", "--all"], { out: (l) => out.push(l), err: (l) => err.push(l) })).toBe(
        0,
      );
      expect(err.some((l) => /delta on seq \d+/.test(l))).toBe(true);
      const sql: string[] = [];
      expect(await runInspect([dir, "sql", "SELECT count(*) FROM t"], { out: (l) => sql.push(l), err: () => {} })).toBe(
        0,
      );
      expect(sql.join("\n")).toContain("120");
      expect(await contents(dir)).toEqual(before);
    });

    it("pruning and thinning with chains never delete a base a kept delta needs, nor the log a fallback needs", async () => {
      const all = (await readdir(template)).filter((n) => n.startsWith("snap-")).map((n) => Number(n.slice(5, 21)));
      const lastSeq = Math.max(...all) + 5;
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: lastSeq }), fc.subarray(all), async (keepFrom, thin) => {
          const dir = await copy();
          const persistence = await openFilePersistence(dir);
          await persistence.load();
          await persistence.thinSnapshots(thin);
          await persistence.prune(keepFrom);
          await persistence.close();
          // Every snapshot left is readable (its chain is whole), and the newest state is exact.
          const reader = await openFilePersistence(dir, { readOnly: true });
          const loaded = await loadWithRecords(reader);
          for (const s of loaded.snapshots)
            await expect(reader.readSnapshot(s.seq)).resolves.toBeInstanceOf(Uint8Array);
          await reader.close();
          const storage = await open(dir);
          expect(await dumpStorage(storage)).toEqual(expected);
          await storage.close();
          // The newest chain's full image damaged after the prune: the fallback it kept still opens.
          // (With a snapshot older than that full image: else nothing older reaches the log.)
          const held = heldOf(await readdir(dir));
          const rootOfNewest = chainOf(held, (held.at(-1) as (typeof held)[number]).seq)?.[0];
          if (rootOfNewest !== undefined && held.some((s) => s.seq < rootOfNewest.seq)) {
            const bytes = await readFile(join(dir, rootOfNewest.name));
            bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0x01;
            await writeFile(join(dir, rootOfNewest.name), bytes);
            const fallback = await open(dir);
            expect(await dumpStorage(fallback)).toEqual(expected);
            await fallback.close();
          }
        }),
        { numRuns: 25 },
      );
    }, 300_000);
  });
});
