/**
 * A snapshot being written is summed, and read back, on a worker (crc-off-thread.ts `crcOfParts`,
 * `crcOfFile`): the sums must be exactly those computed in line; parts the worker cannot read (a
 * large one outside shared memory), a file below the threshold and any failure of the worker (a
 * file that cannot be read) answer `undefined`, so that the caller sums in line; and the adapter's
 * snapshots, summed that way, open as the state they hold.
 */
import * as fs from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { offThreadWriteSums, setOffThreadCrcFromBytes } from "../../src/durability/crc-off-thread";
import { crc32 } from "../../src/durability/crc32";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { parseIdentity } from "../../src/durability/object-identity";
import { nameCrcOf } from "../../src/durability/snapshot-name-crc";
import { ObjectStorage } from "../../src/storage/object-storage";
import { dumpStorage } from "./dump";
import { everyImageOffThread } from "./off-thread";

const root = await fs.mkdtemp(join(tmpdir(), "actorstore-write-crc-"));
const offThread = everyImageOffThread(root);

const bytesOf = (length: number, seed: number) => Uint8Array.from({ length }, (_, i) => (seed * 31 + i * 7) & 0xff);
const concat = (parts: readonly Uint8Array[]) => Buffer.concat(parts.map((p) => Buffer.from(p)));
/** `bytes` in shared memory, as a view at an offset (as a chunk's part would be). */
const shared = (bytes: Uint8Array, offset: number) => {
  const view = new Uint8Array(new SharedArrayBuffer(bytes.length + offset + 5), offset, bytes.length);
  view.set(bytes);
  return view;
};

describe("crcOfParts", () => {
  test("property: the CRC-32 of the parts in order, shared or small, at any offset", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ length: fc.nat(70_000), shared: fc.boolean(), offset: fc.nat(9) }), { maxLength: 6 }),
        async (specs) => {
          const parts = specs.map((s, i) => {
            const b = bytesOf(s.shared ? s.length : Math.min(s.length, 64 * 1024), i + 1);
            return s.shared ? shared(b, s.offset) : b;
          });
          const total = parts.reduce((n, p) => n + p.length, 0);
          const before = offThreadWriteSums().parts;
          const crc = await offThread().crcOfParts(parts, total);
          // Nothing to sum is never worth a thread: the caller's in-line sum of nothing is 0.
          expect(crc).toBe(total === 0 ? undefined : crc32(concat(parts)));
          expect(offThreadWriteSums().parts).toBe(before + (total === 0 ? 0 : 1));
        },
      ),
      { numRuns: 25 },
    );
  });

  test("a part over 64 KiB outside shared memory, or an image under the threshold, is summed in line", async () => {
    expect(await offThread().crcOfParts([shared(bytesOf(10, 1), 0), bytesOf(64 * 1024 + 1, 2)], 64 * 1024 + 11)).toBe(
      undefined,
    );
    const threshold = setOffThreadCrcFromBytes(1000);
    try {
      expect(await offThread().crcOfParts([shared(bytesOf(999, 3), 0)], 999)).toBe(undefined);
      expect(await offThread().crcOfParts([shared(bytesOf(1000, 3), 0)], 1000)).toBe(crc32(bytesOf(1000, 3)));
    } finally {
      setOffThreadCrcFromBytes(threshold);
    }
  });
});

describe("crcOfFile", () => {
  test("the length and CRC-32 of the file as it is on disk, however it changed since it was written", async () => {
    for (const length of [1, 2, 4 * 1024 * 1024 - 1, 4 * 1024 * 1024, 9 * 1024 * 1024 + 17]) {
      const file = join(root, `f-${length}`);
      const data = bytesOf(length, length % 251);
      await fs.writeFile(file, data);
      expect(await offThread().crcOfFile(file, length)).toEqual({ bytes: length, crc: crc32(data) });
      // Changed on disk (one bit, then cut short): the worker reads what is there now.
      data[length >> 1] = (data[length >> 1] as number) ^ 4;
      await fs.writeFile(file, data);
      expect(await offThread().crcOfFile(file, length)).toEqual({ bytes: length, crc: crc32(data) });
      await fs.truncate(file, length - 1);
      expect(await offThread().crcOfFile(file, length)).toEqual({
        bytes: length - 1,
        crc: crc32(data.subarray(0, -1)),
      });
    }
  });

  test("a file the worker cannot read, or an empty one, answers undefined (the read in line then reports why)", async () => {
    await fs.writeFile(join(root, "empty"), new Uint8Array(0));
    expect(await offThread().crcOfFile(join(root, "empty"), 0)).toBe(undefined);
    expect(await offThread().crcOfFile(join(root, "missing"), 10)).toBe(undefined);
    expect(await offThread().crcOfFile(root, 10)).toBe(undefined); // a directory
  });
});

describe("the file adapter's snapshots, summed and read back on a worker", () => {
  test("every snapshot is summed off the event loop, and the directory reopens to the same state", async () => {
    const dir = join(root, "obj");
    const before = offThreadWriteSums();
    const open = async () => {
      const persistence = await openFilePersistence(dir, { segmentBytes: 8000 });
      return { persistence, storage: await ObjectStorage.open({ persistence, snapshotEveryRecords: 10 }) };
    };
    const first = await open();
    for (let i = 0; i < 60; i++) {
      await first.storage.put(`k${i}`, { i, text: "y".repeat(500 + i) });
      if (i % 7 === 0) first.storage.sql.exec("CREATE TABLE IF NOT EXISTS t (v)");
      if (i % 7 > 0) first.storage.sql.exec("INSERT INTO t VALUES (?)", i);
      await first.storage.sync();
    }
    const expected = await dumpStorage(first.storage);
    await first.storage.close();
    await first.persistence.close();
    const after = offThreadWriteSums();
    // Every snapshot file was read back on the worker (the small exported images are not in
    // shared memory, so their parts were summed in line).
    const written = (await fs.readdir(dir)).filter((n) => n.startsWith("snap-")).length;
    expect(written).toBeGreaterThanOrEqual(2);
    expect(after.files - before.files).toBeGreaterThanOrEqual(written);
    const again = await open();
    expect(await dumpStorage(again.storage)).toEqual(expected);
    await again.storage.close();
    await again.persistence.close();
  });

  test("a snapshot written from shared parts is summed on the worker, and reads back as its parts", async () => {
    const dir = join(root, "parts");
    const persistence = await openFilePersistence(dir);
    await persistence.load();
    await persistence.append([
      { seq: 1, timeMs: 1000, reset: false, sql: [], kv: [{ key: "a", value: new Uint8Array([1]) }] },
    ]);
    const parts = [shared(bytesOf(300_000, 5), 3), bytesOf(100, 6), shared(bytesOf(70_000, 7), 0)];
    const before = offThreadWriteSums();
    await persistence.writeSnapshotParts?.({ seq: 1, timeMs: 1000 }, parts);
    expect(offThreadWriteSums().parts).toBe(before.parts + 1);
    expect(offThreadWriteSums().files).toBe(before.files + 1);
    expect(Buffer.from(await persistence.readSnapshot(1)).equals(concat(parts))).toBe(true);
    const [name] = (await fs.readdir(dir)).filter((n) => n.startsWith("snap-"));
    // The name's CRC covers the bytes, the seq and time it names and the directory's identity
    // (snapshot-name-crc.ts, object-identity.ts).
    const [ident] = (await fs.readdir(dir)).filter((n) => n.startsWith("ident-"));
    const nameCrc = nameCrcOf(crc32(concat(parts)), 1, 1000, parseIdentity(ident ?? "")?.id);
    expect(ident).toBeDefined();
    expect(name).toMatch(new RegExp(`-${nameCrc.toString(16).padStart(8, "0")}\\.sqlite$`));
    await persistence.close();
  });
});
