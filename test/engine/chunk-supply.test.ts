/**
 * Chunks from a supply (engine/chunk-supply.ts) and the worker that fills it
 * (durability/chunk-worker.ts). A paged file that takes its new chunks from a supply must hold
 * exactly the bytes one that allocates its own holds, through growth, prepared chunks, freezes and
 * their copies; a supply's buffer of another size is never used; the worker's pool hands out fresh,
 * zeroed, distinct buffers, stops refilling when the worker is gone, and never keeps the process
 * alive.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as threads from "node:worker_threads";
import fc from "fast-check";
import { afterEach, describe, expect, test } from "vitest";
import { WorkerChunkSupply } from "../../src/durability/chunk-worker";
import { type ChunkSupply, suppliedChunks, useChunkSupply } from "../../src/engine/chunk-supply";
import { PagedFile } from "../../src/engine/sqljs-paged-file";
import { runScript } from "../helpers/child-script";

const bytes = (n: number, from = 1) => Uint8Array.from({ length: n }, (_, i) => (from + i * 7) & 0xff);

/** A supply that hands out fresh buffers of `bytes` (and, with `wrongSize`, some of another size). */
function fakeSupply(bytes: number, wrongSize = false): ChunkSupply & { handed: SharedArrayBuffer[] } {
  const handed: SharedArrayBuffer[] = [];
  let n = 0;
  return {
    handed,
    take(asked) {
      n++;
      if (n % 3 === 0) return undefined; // sometimes none is ready
      const buffer = new SharedArrayBuffer(wrongSize && n % 2 === 0 ? asked + 8 : asked);
      if (asked !== bytes) return undefined;
      handed.push(buffer);
      return buffer;
    },
  };
}

afterEach(() => {
  useChunkSupply(undefined);
});

describe("a paged file with a chunk supply", () => {
  const CHUNK = 16;
  type Op =
    | { kind: "set"; at: number; length: number; seed: number }
    | { kind: "freeze" }
    | { kind: "release"; which: number }
    | { kind: "turn" };
  const op: fc.Arbitrary<Op> = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant("set" as const),
        at: fc.nat(300),
        length: fc.integer({ min: 1, max: 40 }),
        seed: fc.nat(255),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: "freeze" as const }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("release" as const), which: fc.nat(5) }) },
    { weight: 2, arbitrary: fc.constant({ kind: "turn" as const }) },
  );

  /** Runs `ops` on a file; returns what every read and every freeze showed. */
  function run(ops: readonly Op[]): { reads: Uint8Array[]; frozen: Buffer[] } {
    const turns: (() => void)[] = [];
    const file = new PagedFile(400, CHUNK, (task) => turns.push(task));
    const freezes: { parts: readonly Uint8Array[]; release(): void }[] = [];
    const reads: Uint8Array[] = [];
    const frozen: Buffer[] = [];
    for (const o of ops) {
      if (o.kind === "set") file.set(bytes(Math.min(o.length, 400 - Math.min(o.at, 399)), o.seed), Math.min(o.at, 399));
      else if (o.kind === "freeze") freezes.push(file.freeze(file.size));
      else if (o.kind === "release") freezes.splice(o.which % Math.max(1, freezes.length), 1)[0]?.release();
      else turns.shift()?.();
      reads.push(file.slice());
      for (const f of freezes) frozen.push(Buffer.concat(f.parts.map((p) => Buffer.from(p))));
    }
    for (const f of freezes) f.release();
    return { reads, frozen };
  }

  test("property: holds the same bytes as a file that allocates its own, in reads and in freezes", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), fc.boolean(), (ops, wrongSize) => {
        const own = run(ops);
        const supply = fakeSupply(CHUNK, wrongSize);
        useChunkSupply(supply);
        const supplied = run(ops);
        useChunkSupply(undefined);
        expect(supplied.reads).toEqual(own.reads);
        expect(supplied.frozen).toEqual(own.frozen);
      }),
      { numRuns: 300 },
    );
  });

  test("growth, prepared chunks and copies after a freeze take whole chunks from the supply, never another size", () => {
    const supply = fakeSupply(CHUNK, true);
    useChunkSupply(supply);
    const before = suppliedChunks();
    const turns: (() => void)[] = [];
    const file = new PagedFile(4000, CHUNK, (task) => turns.push(task));
    file.set(bytes(200), 0);
    while (turns.length > 0) turns.shift()?.();
    const frozen = file.freeze(200);
    file.set(bytes(50, 9), 10);
    while (turns.length > 0) turns.shift()?.();
    expect(file.slice(0, 200)).toEqual(
      Uint8Array.from(bytes(200).map((b, i) => (i >= 10 && i < 60 ? (bytes(50, 9)[i - 10] as number) : b))),
    );
    expect(Buffer.concat(frozen.parts.map((p) => Buffer.from(p))).equals(Buffer.from(bytes(200)))).toBe(true);
    frozen.release();
    // Buffers of the wrong size were offered and never used; every right one was.
    const right = supply.handed.filter((b) => b.byteLength === CHUNK).length;
    expect(supply.handed.length - right).toBeGreaterThan(0);
    expect(right).toBeGreaterThan(5);
    expect(suppliedChunks() - before).toBe(right);
  });
});

describe("WorkerChunkSupply", () => {
  /** Yields turns until `check` holds (a worker starts in tens of milliseconds), at most 20 s. */
  const waitFor = async (check: () => boolean) => {
    const until = performance.now() + 20_000;
    while (!check() && performance.now() < until) await new Promise((r) => setImmediate(r));
  };

  test("fills its pool on the first ask; hands out fresh, zeroed, distinct buffers of its size only", async () => {
    const supply = new WorkerChunkSupply(threads, 4096);
    expect(supply.take(4096)).toBeUndefined(); // nothing asked for yet: the first ask starts the worker
    await waitFor(() => supply.ready >= 16);
    expect(supply.ready).toBe(16);
    expect(supply.take(8192)).toBeUndefined();
    const seen = new Set<SharedArrayBuffer>();
    for (let i = 0; i < 40; i++) {
      let buffer = supply.take(4096);
      if (buffer === undefined) {
        await waitFor(() => supply.ready > 0);
        buffer = supply.take(4096);
      }
      expect(buffer).toBeInstanceOf(SharedArrayBuffer);
      const b = buffer as SharedArrayBuffer;
      expect(b.byteLength).toBe(4096);
      expect(new Uint8Array(b).every((x) => x === 0)).toBe(true);
      expect(seen.has(b)).toBe(false);
      seen.add(b);
      new Uint8Array(b).fill(0xee); // the taker owns it now
    }
    await supply.stop();
    expect(supply.failed).toBe(true);
  });

  test("a stopped worker refills nothing; the buffers already ready are still handed out", async () => {
    const supply = new WorkerChunkSupply(threads, 1024);
    supply.take(1024);
    await waitFor(() => supply.ready >= 16);
    await supply.stop();
    let handed = 0;
    while (supply.take(1024) !== undefined) handed++;
    expect(handed).toBe(16);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(supply.take(1024)).toBeUndefined();
  });

  test("never keeps the process alive: a process that grew a database through the file adapter exits", async () => {
    const root = resolve(import.meta.dirname, "../..");
    const dir = await mkdtemp(join(tmpdir(), "actorstore-chunk-worker-"));
    try {
      const script = join(dir, "grow.mts");
      await writeFile(
        script,
        [
          `import { openFilePersistence } from ${JSON.stringify(join(root, "src/durability/file-persistence.ts"))};`,
          `import { ObjectStorage } from ${JSON.stringify(join(root, "src/storage/object-storage.ts"))};`,
          `import { suppliedChunks } from ${JSON.stringify(join(root, "src/engine/chunk-supply.ts"))};`,
          `const persistence = await openFilePersistence(${JSON.stringify(join(dir, "obj"))});`,
          "const storage = await ObjectStorage.open({ persistence });",
          "for (let b = 0; b < 40; b++) {",
          '  for (let i = 0; i < 100; i++) void storage.put("k" + b + "-" + i, new Uint8Array(1000).fill(b));',
          "  await storage.sync();",
          "}",
          "await storage.close();",
          "await persistence.close();",
          "console.log(JSON.stringify({ supplied: suppliedChunks() }));",
        ].join("\n"),
      );
      const { code, out, err } = await runScript(script, root);
      expect({ code, err }).toEqual({ code: 0, err: "" });
      // About 4 MB of database: the growth took chunks from the worker's pool.
      expect(JSON.parse(out).supplied).toBeGreaterThan(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
