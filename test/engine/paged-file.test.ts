/**
 * The paged database file (sqljs-paged-file.ts): the part of the `Uint8Array` surface that
 * Emscripten's in-memory file system uses (`length`, `set`, `subarray`, `slice`) must behave as a
 * plain `Uint8Array` of the same length would, whatever the chunk boundaries; and opening on it must
 * fall back to the file system's own storage when the file system does not take it.
 */
import fc from "fast-check";
import initSqlJs from "sql.js";
import { describe, expect, test } from "vitest";
import { droppedChunkTells } from "../../src/engine/sqljs-paged-chunks";
import { openOnPagedFile, PagedFile } from "../../src/engine/sqljs-paged-file";
import { probePagedFiles } from "../../src/engine/sqljs-paged-probe";

const bytes = (n: number, from = 1) => Uint8Array.from({ length: n }, (_, i) => (from + i * 7) & 0xff);

describe("PagedFile", () => {
  test("a write across several chunks reads back at any offset, as one buffer", () => {
    const file = new PagedFile(1000, 16);
    const model = new Uint8Array(1000);
    const data = bytes(75);
    file.set(data, 10);
    model.set(data, 10);
    expect(file.size).toBe(85);
    for (let a = 0; a < 100; a += 3) {
      for (let b = a; b < 100; b += 5) expect(file.slice(a, b)).toEqual(model.slice(a, b));
    }
    // Within one chunk a read is a view of it; across chunks a copy: same bytes either way.
    expect(file.subarray(16, 32)).toEqual(model.subarray(16, 32));
    expect(file.subarray(13, 50)).toEqual(model.subarray(13, 50));
    expect(file.subarray()).toEqual(model);
  });

  test("growth allocates only the chunks written; a single small chunk grows by doubling", () => {
    const file = new PagedFile(1 << 20, 64 * 1024);
    file.set(bytes(100), 0);
    expect(file.allocatedChunks).toBe(1);
    expect(file.subarray(0, 100)).toEqual(bytes(100));
    // Far past the end: the chunks between stay unallocated and read as zeros.
    file.set(bytes(10, 5), 5 * 64 * 1024 + 3);
    expect(file.allocatedChunks).toBe(2);
    expect(file.size).toBe(5 * 64 * 1024 + 13);
    expect(file.slice(64 * 1024 - 2, 64 * 1024 + 2)).toEqual(new Uint8Array(4));
    expect(file.slice(5 * 64 * 1024, 5 * 64 * 1024 + 13)).toEqual(Uint8Array.from([0, 0, 0, ...bytes(10, 5)]));
    // The first chunk (allocated small) keeps its bytes when written past its allocation.
    file.set(bytes(3, 9), 64 * 1024 - 3);
    expect(file.slice(0, 100)).toEqual(bytes(100));
    expect(file.slice(64 * 1024 - 3, 64 * 1024)).toEqual(bytes(3, 9));
  });

  test("truncation as the file system does it: it copies the kept part out with subarray(0, n)", () => {
    const file = new PagedFile(4096, 64);
    const data = bytes(1000);
    file.set(data, 0);
    for (const n of [0, 1, 63, 64, 65, 640, 999, 1000]) {
      const kept = new Uint8Array(n);
      kept.set(file.subarray(0, n));
      expect(kept).toEqual(data.subarray(0, n));
    }
  });

  test("bytes from a signed heap view (Emscripten's HEAP8) land unchanged", () => {
    const file = new PagedFile(100, 8);
    const heap = new Int8Array(Uint8Array.from([0, 255, 128, 127, 1, 200, 3, 4, 5, 6, 7, 250]).buffer);
    file.set(heap.subarray(1, 11), 3);
    const out = new Int8Array(20);
    out.set(file.subarray(3, 13), 2);
    expect([...new Uint8Array(out.buffer, 2, 10)]).toEqual([255, 128, 127, 1, 200, 3, 4, 5, 6, 7]);
    file.set([1, 2, 300], 0);
    expect([...file.slice(0, 3)]).toEqual([1, 2, 44]);
  });

  test("writes past the capacity are refused as Uint8Array.set refuses them; watchers see each write's chunks", () => {
    const file = new PagedFile(40, 16);
    expect(() => file.set(bytes(5), 36)).toThrow(RangeError);
    expect(() => new Uint8Array(40).set(bytes(5), 36)).toThrow(RangeError);
    expect(() => file.set(bytes(1), -1)).toThrow(RangeError);
    const seen: [number, number][] = [];
    const stop = file.watch((first, last) => seen.push([first, last]));
    file.set(bytes(4), 14);
    file.set(bytes(1), 39);
    stop();
    file.set(bytes(1), 0);
    expect(seen).toEqual([
      [0, 1],
      [2, 2],
    ]);
  });

  test("property: any sequence of writes and reads answers as a plain Uint8Array of the same length", () => {
    const op = fc.oneof(
      ...writesAndViews(700, 90),
      fc.record({
        kind: fc.constant("read" as const),
        at: fc.integer({ min: 0, max: 700 }),
        n: fc.integer({ min: 0, max: 100 }),
      }),
      // A later turn: one task the file scheduled (preparing chunks ahead of its end) runs.
      fc.record({ kind: fc.constant("turn" as const) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 70 }), fc.array(op, { maxLength: 40 }), (chunk, ops) => {
        const turns: (() => void)[] = [];
        const file = new PagedFile(700, chunk, (task) => turns.push(task));
        const model = new Uint8Array(700);
        for (const o of ops) {
          if (o.kind === "turn") {
            const size = file.size;
            turns.shift()?.();
            expect(file.size).toBe(size);
          } else if (o.kind === "set") {
            const ours = attempt(() => file.set(o.data, o.at));
            const theirs = attempt(() => model.set(o.data, o.at));
            expect(ours).toEqual(theirs);
          } else if (o.kind === "read") {
            const n = Math.min(o.n, 700 - o.at);
            const target = new Uint8Array(n).fill(9);
            file.read(o.at, target);
            expect(target).toEqual(model.slice(o.at, o.at + n));
          } else {
            expect(file[o.kind](o.a, o.b)).toEqual(model[o.kind](o.a, o.b));
          }
        }
        expect(file.slice()).toEqual(model);
      }),
    );
  });
});

describe("PagedFile: chunks in shared memory", () => {
  test("chunks live in SharedArrayBuffers (not counted by V8); a disposed file is empty, and its garbage is reported every 32 MiB", () => {
    const chunk = 256 * 1024;
    const file = new PagedFile(64 << 20, chunk);
    const data = bytes(chunk + 100, 3);
    // 33 MiB of chunks, each written across a boundary.
    for (let at = 0; at < 33 << 20; at += chunk) file.set(data.subarray(0, chunk), at);
    file.set(data.subarray(chunk), 5 * chunk - 50);
    const model = new Uint8Array(33 << 20);
    for (let at = 0; at < 33 << 20; at += chunk) model.set(data.subarray(0, chunk), at);
    model.set(data.subarray(chunk), 5 * chunk - 50);
    expect(file.subarray(chunk, 2 * chunk).buffer).toBeInstanceOf(SharedArrayBuffer);
    // Reads of shared chunks (views and copies) answer as a plain array's.
    expect(file.slice(5 * chunk - 60, 5 * chunk + 60)).toEqual(model.slice(5 * chunk - 60, 5 * chunk + 60));
    expect(file.slice(5 * chunk - 60, 5 * chunk + 60).buffer).toBeInstanceOf(ArrayBuffer);
    // A freeze holds its chunks past a dispose; writes afterwards never reach it.
    const frozen = file.freeze(file.size);
    const before = droppedChunkTells();
    file.dispose();
    expect(droppedChunkTells()).toBe(before + 1);
    expect(file.allocatedChunks).toBe(0);
    expect(file.size).toBe(0);
    let at = 0;
    let differing = 0;
    for (const part of frozen.parts) {
      for (let i = 0; i < part.length; i++) if (part[i] !== model[at + i]) differing++;
      at += part.length;
    }
    expect(differing).toBe(0);
    expect(at).toBe(33 << 20);
    frozen.release();
    // A small file's garbage is not reported on its own.
    const small = new PagedFile(1 << 20, chunk);
    small.set(data, 0);
    small.dispose();
    expect(droppedChunkTells()).toBe(before + 1);
  });
});

describe("PagedFile: the next growth's chunks prepared on later turns", () => {
  /** A paged file of 64-byte chunks whose scheduled tasks wait in `turns`. */
  const withTurns = (capacity = 1 << 20) => {
    const turns: (() => void)[] = [];
    const file = new PagedFile(capacity, 64, (task) => turns.push(task));
    const runAll = () => {
      let n = 0;
      while (turns.length > 0) {
        (turns.shift() as () => void)();
        n++;
      }
      return n;
    };
    return { file, turns, runAll };
  };

  test("a growing write schedules one task, which prepares one chunk per turn; the same growth then allocates nothing", () => {
    const { file, turns, runAll } = withTurns();
    file.set(bytes(100), 0);
    expect(file.allocatedChunks).toBe(2);
    expect(turns).toHaveLength(1);
    // Grown by 100 bytes: the chunks up to 100 bytes past the end (chunks 2 and 3), one per turn.
    expect(runAll()).toBe(2);
    expect(file.allocatedChunks).toBe(4);
    expect(file.size).toBe(100);
    // Prepared chunks read as zeros, like missing ones.
    const expected = new Uint8Array(166);
    expected.set(bytes(100).subarray(90));
    expect(file.slice(90, 256)).toEqual(expected);
    file.set(bytes(100, 3), 100);
    expect(file.allocatedChunks).toBe(4);
    expect(file.slice(100, 200)).toEqual(bytes(100, 3));
    // A write that does not grow the file schedules nothing.
    runAll();
    file.set(bytes(10), 20);
    expect(turns).toHaveLength(0);
  });

  test("no task without a scheduler, for a file of one chunk, or while one is pending", () => {
    const plain = new PagedFile(1 << 20, 64);
    plain.set(bytes(300), 0);
    expect(plain.allocatedChunks).toBe(5);
    const { file, turns } = withTurns();
    file.set(bytes(64), 0);
    expect(turns).toHaveLength(0);
    file.set(bytes(1), 64);
    file.set(bytes(1), 65);
    expect(turns).toHaveLength(1);
  });

  test("ahead at most 16 chunks, never past the capacity", () => {
    const big = withTurns();
    big.file.set(bytes(64 * 40), 0);
    expect(big.runAll()).toBe(16);
    expect(big.file.allocatedChunks).toBe(40 + 16);
    const near = withTurns(64 * 6);
    near.file.set(bytes(64 * 4), 0);
    near.runAll();
    expect(near.file.allocatedChunks).toBe(6);
    near.file.set(bytes(64 * 2), 64 * 4);
    expect(near.file.allocatedChunks).toBe(6);
  });

  test("the growth since the last preparation sets how far ahead: a slow writer finds each chunk ready, and no more", () => {
    const { file, runAll } = withTurns();
    file.set(bytes(70), 0);
    runAll();
    // Grown by 70: prepared to 140 bytes (chunk 2).
    expect(file.allocatedChunks).toBe(3);
    for (let at = 70; at < 700; at += 10) {
      const before = file.allocatedChunks;
      file.set(bytes(10, at), at);
      // The write found its chunk prepared.
      expect(file.allocatedChunks).toBe(before);
      runAll();
      // Prepared up to the next 10 bytes' chunk, not beyond.
      expect(file.allocatedChunks).toBe(Math.max(3, Math.floor((file.size + 10 - 1) / 64) + 1));
    }
    expect(file.slice(0, 700)).toEqual(
      Uint8Array.from({ length: 700 }, (_, i) => (i < 70 ? bytes(70)[i] : bytes(10, i - (i % 10))[i % 10]) as number),
    );
  });
});

describe("PagedFile adopting an image", () => {
  test("shared: reads are of the image in place, a chunk is copied before its first write, the image never changes", () => {
    const image = bytes(100);
    const before = image.slice();
    const file = new PagedFile(400, 16);
    file.adopt(image, true);
    expect(file.size).toBe(100);
    expect(file.sharedChunks).toBe(7);
    // A read within a chunk is a view of the image itself: nothing was copied.
    const view = file.subarray(16, 32);
    expect(view.buffer).toBe(image.buffer);
    expect(view).toEqual(before.subarray(16, 32));
    file.set(bytes(20, 200), 10);
    file.set(bytes(5, 90), 98);
    expect(image).toEqual(before);
    expect(file.sharedChunks).toBe(4);
    const model = new Uint8Array(400);
    model.set(before);
    model.set(bytes(20, 200), 10);
    model.set(bytes(5, 90), 98);
    expect(file.slice()).toEqual(model);
    expect(file.subarray(48, 64).buffer).toBe(image.buffer);
    // Once the caller lets go, writes land in the image in place.
    file.own();
    expect(file.sharedChunks).toBe(0);
    file.set([1, 2, 3], 50);
    expect([...image.subarray(50, 53)]).toEqual([1, 2, 3]);
    model.set([1, 2, 3], 50);
    expect(file.slice()).toEqual(model);
  });

  test("taken: the image is the file; writes land in it", () => {
    const image = bytes(40);
    const file = new PagedFile(100, 16);
    file.adopt(image, false);
    expect(file.sharedChunks).toBe(0);
    file.set([7, 7], 20);
    expect([...image.subarray(20, 22)]).toEqual([7, 7]);
    // A write past the image's last (short) chunk moves that chunk to storage of its own.
    file.set([5], 47);
    expect(file.slice(0, 48)).toEqual(Uint8Array.from([...image, 0, 0, 0, 0, 0, 0, 0, 5]));
  });

  test("property: a shared image answers as a plain copy of it, and is never changed", () => {
    const op = fc.oneof(...writesAndViews(300, 60));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.uint8Array({ minLength: 0, maxLength: 250 }),
        fc.array(op, { maxLength: 30 }),
        (chunk, image, ops) => {
          const before = image.slice();
          const file = new PagedFile(300, chunk);
          file.adopt(image, true);
          const model = new Uint8Array(300);
          model.set(image);
          for (const o of ops) {
            if (o.kind === "set")
              expect(attempt(() => file.set(o.data, o.at))).toEqual(attempt(() => model.set(o.data, o.at)));
            else expect(file[o.kind](o.a, o.b)).toEqual(model[o.kind](o.a, o.b));
          }
          expect(file.slice()).toEqual(model);
          expect(image).toEqual(before);
        },
      ),
    );
  });
});

describe("PagedFile frozen in place", () => {
  const join = (parts: readonly Uint8Array[]) => Buffer.concat(parts.map((p) => Buffer.from(p)));

  test("a freeze holds the bytes of its moment while writes land; once released, writes land in place again", () => {
    const file = new PagedFile(200, 16);
    file.set(bytes(70), 0);
    const frozen = file.freeze(70);
    expect(frozen.byteLength).toBe(70);
    expect(frozen.parts.map((p) => p.length)).toEqual([16, 16, 16, 16, 6]);
    expect(join(frozen.parts).equals(Buffer.from(bytes(70)))).toBe(true);
    expect(file.frozenChunks).toBe(5);
    file.set([9, 9, 9], 30); // chunk 1 (bytes 16–31) and chunk 2
    file.set([8], 69); // the last, short part's chunk
    file.set(bytes(40, 50), 70); // growth: chunk 4 again, then new chunks
    expect(join(frozen.parts).equals(Buffer.from(bytes(70)))).toBe(true);
    expect(file.frozenChunks).toBe(2); // chunks 0 and 3 were not written
    const model = new Uint8Array(200);
    model.set(bytes(70));
    model.set([9, 9, 9], 30);
    model.set([8], 69);
    model.set(bytes(40, 50), 70);
    expect(file.slice()).toEqual(model);
    frozen.release();
    frozen.release(); // idempotent
    expect(file.frozenChunks).toBe(0);
    // Released: chunk 0 is the file's own again, so a write lands in it (the old part sees it).
    file.set([1], 0);
    expect(frozen.parts[0]?.[0]).toBe(1);
  });

  test("with a scheduler, chunk 0, the last two and the recently written frozen chunks are copied on later turns, one per turn; the freeze keeps its bytes", () => {
    const turns: (() => void)[] = [];
    const file = new PagedFile(400, 16, (task) => turns.push(task));
    file.set(bytes(100), 0); // chunks 0-6, the last one short
    // The latest 32 chunk writes are all in chunk 2 (as page writes of the last commits would be).
    for (let i = 0; i < 32; i++) file.set(bytes(4, i), 36);
    while (turns.length > 0) turns.shift()?.(); // the growth's prepared chunks
    const frozen = file.freeze(100);
    expect(file.frozenChunks).toBe(7);
    const views = frozen.parts.map((p) => p);
    const at = frozen.parts.map((p) => Buffer.from(p));
    let copied = 0;
    while (turns.length > 0) {
      turns.shift()?.();
      copied++;
      expect(file.frozenChunks).toBe(7 - Math.min(copied, 4));
    }
    expect(copied).toBe(4);
    // Chunks 1, 3 and 4 are still held; 0, 2, 5 and 6 are the file's own copies: writes land
    // there, not in the parts.
    file.set([1, 2, 3], 0);
    file.set([4], 95);
    file.set([5], 85);
    file.set([6], 40);
    expect(file.frozenChunks).toBe(3);
    expect(frozen.parts.every((p, i) => Buffer.from(p).equals(at[i] as Buffer))).toBe(true);
    expect(frozen.parts.every((p, i) => p === views[i])).toBe(true);
    const model = bytes(100);
    model.set(bytes(4, 31), 36);
    model.set([1, 2, 3], 0);
    model.set([4], 95);
    model.set([5], 85);
    model.set([6], 40);
    expect(file.slice(0, 100)).toEqual(model);
    frozen.release();
    // Released before its turns ran: nothing is copied.
    const again = file.freeze(100);
    again.release();
    while (turns.length > 0) turns.shift()?.();
    file.set([7], 1);
    expect(again.parts[0]?.[1]).toBe(7);
  });

  test("two freezes: a chunk stays held until the last is released; ranges never written are zeros", () => {
    const file = new PagedFile(100, 8);
    file.set([5, 5], 30); // chunks 0–2 never written
    const first = file.freeze(32);
    const second = file.freeze(20);
    expect(join(first.parts).equals(Buffer.from(new Uint8Array(32).fill(5, 30)))).toBe(true);
    expect(join(second.parts).equals(Buffer.alloc(20))).toBe(true);
    first.release();
    file.set([7], 31);
    expect(join(first.parts)[31]).toBe(5);
    second.release();
    expect(() => file.freeze(33)).toThrow(RangeError);
  });

  test("a freeze of a shared image: the image never changes, and neither does the freeze", () => {
    const image = bytes(40);
    const file = new PagedFile(100, 16);
    file.adopt(image, true);
    const frozen = file.freeze(40);
    file.own(); // the image's owner lets go; the freeze still holds its chunks
    file.set([0, 0, 0], 14);
    expect(join(frozen.parts).equals(Buffer.from(bytes(40)))).toBe(true);
    expect(image).toEqual(bytes(40));
    frozen.release();
  });

  test("property: every freeze holds the bytes of its moment until released, whatever is written meanwhile", () => {
    const op = fc.oneof(
      ...writesAndViews(300, 60),
      fc.record({ kind: fc.constant("freeze" as const), n: fc.nat() }),
      fc.record({ kind: fc.constant("release" as const), which: fc.nat() }),
      fc.record({ kind: fc.constant("turn" as const) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.array(op, { maxLength: 40 }), (chunk, ops) => {
        const turns: (() => void)[] = [];
        const file = new PagedFile(300, chunk, (task) => turns.push(task));
        const model = new Uint8Array(300);
        const held: { frozen: ReturnType<PagedFile["freeze"]>; bytes: Uint8Array }[] = [];
        const check = () => {
          for (const h of held) expect(join(h.frozen.parts).equals(Buffer.from(h.bytes))).toBe(true);
        };
        for (const o of ops) {
          if (o.kind === "set")
            expect(attempt(() => file.set(o.data, o.at))).toEqual(attempt(() => model.set(o.data, o.at)));
          else if (o.kind === "freeze") {
            const n = o.n % (file.size + 1);
            held.push({ frozen: file.freeze(n), bytes: model.slice(0, n) });
          } else if (o.kind === "release") {
            const [h] = held.splice(o.which % Math.max(1, held.length), 1);
            h?.frozen.release();
          } else if (o.kind === "turn") turns.shift()?.();
          else expect(file[o.kind](o.a, o.b)).toEqual(model[o.kind](o.a, o.b));
          check();
        }
        expect(file.slice()).toEqual(model);
        for (const h of held) h.frozen.release();
        expect(file.frozenChunks).toBe(0);
      }),
    );
  });

  test("property: every write that lands marks its chunks, counts once and is told to watchers, in place or copied on write alike", () => {
    const op = fc.oneof(
      writesAndViews(300, 60)[0],
      // Page-sized writes at page offsets: the shape of every write SQLite makes.
      {
        arbitrary: fc.record({ kind: fc.constant("page" as const), page: fc.integer({ min: 0, max: 36 }) }),
        weight: 3,
      },
      fc.record({ kind: fc.constant("freeze" as const), n: fc.nat() }),
      fc.record({ kind: fc.constant("release" as const), which: fc.nat() }),
      fc.record({ kind: fc.constant("turn" as const) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.array(op, { minLength: 10, maxLength: 60 }), (chunk, ops) => {
        const turns: (() => void)[] = [];
        const file = new PagedFile(300, chunk, (task) => turns.push(task));
        const model = new Uint8Array(300);
        const seen: [number, number][] = [];
        file.watch((first, last) => seen.push([first, last]));
        const told: [number, number][] = [];
        let writes = 0;
        // The chunks written since the latest freeze (whose mark the next freeze asks about).
        let since = new Set<number>();
        let last: number | undefined;
        const held: ReturnType<PagedFile["freeze"]>[] = [];
        for (const o of ops) {
          if (o.kind === "set" || o.kind === "page") {
            const [data, at] = o.kind === "set" ? [o.data, o.at] : [bytes(8, o.page), o.page * 8];
            const outcome = attempt(() => model.set(data, at));
            expect(attempt(() => file.set(data, at))).toBe(outcome);
            if (outcome === "ok" && data.length > 0) {
              writes++;
              const first = Math.floor(at / chunk);
              const end = Math.floor((at + data.length - 1) / chunk);
              told.push([first, end]);
              for (let i = first; i <= end; i++) since.add(i);
            }
          } else if (o.kind === "freeze") {
            const n = o.n % (file.size + 1);
            const frozen = file.freeze(n, last);
            const count = Math.ceil(n / chunk);
            if (last === undefined) expect(frozen.changed).toBeUndefined();
            else expect(frozen.changed).toEqual([...since].filter((i) => i < count).sort((a, b) => a - b));
            expect(join(frozen.parts).equals(Buffer.from(model.subarray(0, n)))).toBe(true);
            held.push(frozen);
            last = frozen.mark;
            since = new Set();
          } else if (o.kind === "release") {
            const [h] = held.splice(o.which % Math.max(1, held.length), 1);
            h?.release();
          } else turns.shift()?.();
        }
        expect(file.writes).toBe(writes);
        expect(seen).toEqual(told);
        expect(file.slice()).toEqual(model);
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * Operations on a file of `length` bytes: a write of up to `maxData` bytes at any offset (also past
 * the end, which must fail as a `Uint8Array` fails), and `subarray`/`slice` with any bounds,
 * negative and out of range included.
 */
function writesAndViews(length: number, maxData: number) {
  const bound = fc.option(fc.integer({ min: -length - 20, max: length + 20 }), { nil: undefined });
  return [
    fc.record({
      kind: fc.constant("set" as const),
      at: fc.integer({ min: 0, max: length }),
      data: fc.uint8Array({ maxLength: maxData }),
    }),
    fc.record({ kind: fc.constantFrom("subarray" as const, "slice" as const), a: bound, b: bound }),
  ] as const;
}

function attempt(fn: () => void): string {
  try {
    fn();
    return "ok";
  } catch (e) {
    return e instanceof RangeError ? "RangeError" : String(e);
  }
}

describe("opening on a paged file", () => {
  const image = bytes(5000);

  test("a file system that keeps the seed's slice() gets the paged file, loaded with the image", () => {
    const file = new PagedFile(1 << 20, 1024);
    const kept: unknown[] = [];
    const { opened, paged } = openOnPagedFile(image, file, (seed) => {
      kept.push(seed.slice(0, seed.length));
      return "db";
    });
    expect(opened).toBe("db");
    expect(paged).toBe(true);
    expect(kept[0]).toBe(file);
    expect(file.slice(0, file.size)).toEqual(image);
    // The caller's image is neither changed nor given a slice() of ours.
    expect(image.slice(0, 3)).toBeInstanceOf(Uint8Array);
  });

  test("a file system that copies the seed otherwise: not paged, and the copy is exact", () => {
    const file = new PagedFile(1 << 20, 1024);
    let copy: Uint8Array | undefined;
    const { paged } = openOnPagedFile(image, file, (seed) => {
      copy = new Uint8Array(seed);
      // A second slice, or one of part of the seed, is a plain copy too.
      expect(seed.slice(1, 4)).toEqual(image.slice(1, 4));
    });
    expect(paged).toBe(false);
    expect(copy).toEqual(image);
    expect(file.size).toBe(0);
  });

  test("the load-time probe refuses a sql.js whose file system does not keep the paged file", async () => {
    // The options actorstore loads sql.js with: the first initSqlJs() call's options hold for the
    // whole process, and the defaults would give every later connection the legacy functions.
    const SQL = await initSqlJs({ useOldExtensionFunctions: false } as object);
    // As the engine opens a database: a new one gets its header page right away.
    const opener = (copy: boolean) => (b?: Uint8Array) => {
      const db = new SQL.Database(b === undefined || !copy ? b : new Uint8Array(b));
      db.exec("PRAGMA user_version = 0");
      return db;
    };
    const image = probePagedFiles(opener(false));
    expect(image).toBeInstanceOf(Uint8Array);
    const check = new SQL.Database(image);
    expect(check.exec("PRAGMA schema_version")).toEqual(new SQL.Database().exec("PRAGMA schema_version"));
    // Opening through a copy of the bytes: the file system never sees our slice().
    expect(probePagedFiles(opener(true))).toBeUndefined();
  });
});
