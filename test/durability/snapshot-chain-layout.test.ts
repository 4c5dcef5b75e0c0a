/**
 * Reading a delta chain straight into the image it composes (snapshot-chain-read.ts,
 * `layOutChain`, read and checked by crc-off-thread.ts): for random chains, the image is byte for
 * byte the one applying the deltas in turn gives (`ChainReader.image`, every file checked first);
 * a chain whose image shrinks on the way is left to that reader; and one flipped bit in any file of
 * the chain makes the check fail, on the worker and in line alike.
 */

import * as fs from "node:fs/promises";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { offThreadCrcAnswers, offThreadCrcFiles, setOffThreadCrcStepBytes } from "../../src/durability/crc-off-thread";
import { crc32 } from "../../src/durability/crc32";
import { type ChainFile, ChainReader, layOutChain } from "../../src/durability/snapshot-chain-read";
import { encodeDelta } from "../../src/durability/snapshot-delta";
import { concat } from "../../src/util/bytes";
import { everyImageOffThread } from "./off-thread";

const root = await mkdtemp(join(tmpdir(), "actorstore-chain-layout-"));
let counter = 0;
const offThread = everyImageOffThread(root);

/** One step of a chain: the image's new length and the chunks rewritten (besides any growth). */
const step = fc.record({
  grow: fc.integer({ min: -40, max: 300 }),
  picks: fc.array(fc.nat(), { maxLength: 6 }),
  salt: fc.nat(255),
});

/**
 * Writes a chain to a fresh directory: a full image of `baseBytes`, then a delta per step, each
 * holding the chunks it rewrites and every chunk past the previous image's end (as the storage's
 * schedule writes them). Returns the chain's files and each state's image.
 */
async function writeChain(
  chunkBytes: number,
  baseBytes: number,
  steps: readonly { grow: number; picks: number[]; salt: number }[],
): Promise<{ dir: string; chain: ChainFile[]; states: Uint8Array[] }> {
  const dir = join(root, `c-${++counter}`);
  await fs.mkdir(dir);
  const base = Uint8Array.from({ length: baseBytes }, (_, i) => (i * 7 + 3) & 255);
  const fullName = "full";
  await writeFile(join(dir, fullName), base);
  const chain: ChainFile[] = [
    { name: fullName, seq: 1, crc: crc32(base), bytes: base.length, imageBytes: base.length },
  ];
  const states = [base];
  let image = base;
  for (const [k, s] of steps.entries()) {
    const length = Math.max(1, image.length + s.grow);
    const next = new Uint8Array(length);
    next.set(image.subarray(0, length));
    const count = Math.ceil(length / chunkBytes);
    const indexes = new Set(s.picks.map((p) => p % count));
    for (let i = Math.floor(image.length / chunkBytes); i < count; i++) indexes.add(i);
    const sorted = [...indexes].sort((a, b) => a - b);
    for (const i of sorted)
      for (let b = i * chunkBytes; b < Math.min(length, (i + 1) * chunkBytes); b++)
        next[b] = (b * 31 + s.salt + k) & 255;
    const previous = chain[chain.length - 1] as ChainFile;
    const seq = previous.seq + 1;
    const file = concat(
      encodeDelta(seq, previous.crc, {
        baseSeq: previous.seq,
        byteLength: length,
        chunkBytes,
        chunks: sorted.map((index) => ({
          index,
          bytes: next.slice(index * chunkBytes, Math.min(length, (index + 1) * chunkBytes)),
        })),
      }),
    );
    const name = `delta-${seq}`;
    await writeFile(join(dir, name), file);
    chain.push({ name, seq, crc: crc32(file), bytes: file.length, baseSeq: previous.seq, imageBytes: length });
    states.push(next);
    image = next;
  }
  return { dir, chain, states };
}

const chains = fc.record({
  chunkBytes: fc.integer({ min: 1, max: 64 }),
  baseBytes: fc.integer({ min: 1, max: 500 }),
  steps: fc.array(step, { minLength: 1, maxLength: 8 }),
});

describe("a delta chain read straight into its image", () => {
  it("composes the image applying the deltas in turn gives, or leaves a shrinking chain to that", async () => {
    let laidOut = 0;
    let shrinking = 0;
    await fc.assert(
      fc.asyncProperty(chains, fc.integer({ min: 1, max: 97 }), async ({ chunkBytes, baseBytes, steps }, readStep) => {
        const { dir, chain, states } = await writeChain(chunkBytes, baseBytes, steps);
        const file = (name: string) => join(dir, name);
        const expected = states[states.length - 1] as Uint8Array;
        const inTurn = await new ChainReader(fs, file).image(chain);
        expect(inTurn).toEqual(expected);
        const layout = await layOutChain(fs, file, chain);
        const shrinks = chain.some((f, i) => i > 0 && f.imageBytes < (chain[i - 1] as ChainFile).imageBytes);
        if (shrinks) {
          expect(layout).toBeUndefined();
          shrinking++;
          return;
        }
        if (layout === undefined) throw new Error("a chain that never shrinks is laid out");
        laidOut++;
        // Every file's pieces cover it exactly, in order.
        for (const [i, f] of layout.files.entries()) {
          let offset = 0;
          for (const p of f.pieces) {
            expect(p.offset).toBe(offset);
            offset += p.length;
          }
          expect(offset).toBe((chain[i] as ChainFile).bytes);
        }
        const answers = offThreadCrcAnswers();
        // Read in steps of a few bytes, each summed by the worker once read: a step may end inside a
        // piece, at its end, or span no more than one piece.
        const previousStep = setOffThreadCrcStepBytes(readStep);
        const read = await offThread()
          .readScatteredAndCheck(layout.files, layout.imageBytes, layout.scratchBytes)
          .finally(() => setOffThreadCrcStepBytes(previousStep));
        expect(read).toBeDefined();
        expect(await read?.matches).toBe(true);
        expect(offThreadCrcAnswers()).toBe(answers + 1);
        expect(read?.image).toEqual(expected);
        // Each byte of the image is read once: no two pieces read into the image overlap.
        const into = layout.files.flatMap((f) => f.pieces.filter((p) => !p.scratch)).sort((a, b) => a.at - b.at);
        for (let i = 1; i < into.length; i++)
          expect(
            (into[i - 1] as (typeof into)[number]).at + (into[i - 1] as (typeof into)[number]).length,
          ).toBeLessThanOrEqual((into[i] as (typeof into)[number]).at);
        // And the scratch holds the rest of the files' bytes: headers and chunks a newer file rewrites.
        const onDisk = chain.reduce((n, f) => n + f.bytes, 0);
        expect(into.reduce((n, p) => n + p.length, 0) + layout.scratchBytes).toBe(onDisk);
      }),
      { numRuns: 150 },
    );
    expect(laidOut).toBeGreaterThan(20);
    expect(shrinking).toBeGreaterThan(5);
  }, 120_000);

  it("one flipped bit in any file of the chain fails the check; the reader in turn names that file", async () => {
    const growing = fc.record({
      chunkBytes: fc.integer({ min: 1, max: 64 }),
      baseBytes: fc.integer({ min: 1, max: 500 }),
      steps: fc.array(
        step.map((s) => ({ ...s, grow: Math.abs(s.grow) })),
        { minLength: 1, maxLength: 6 },
      ),
    });
    await fc.assert(
      fc.asyncProperty(
        growing,
        fc.nat(),
        fc.nat(),
        fc.nat(7),
        fc.integer({ min: 1, max: 97 }),
        async ({ chunkBytes, baseBytes, steps }, which, at, bit, readStep) => {
          const { dir, chain } = await writeChain(chunkBytes, baseBytes, steps);
          const file = (name: string) => join(dir, name);
          const layout = await layOutChain(fs, file, chain);
          if (layout === undefined) throw new Error("a growing chain is laid out");
          const victim = chain[which % chain.length] as ChainFile;
          const bytes = await readFile(file(victim.name));
          const offset = at % bytes.length;
          bytes[offset] = (bytes[offset] as number) ^ (1 << bit);
          await writeFile(file(victim.name), bytes);
          const where = `${victim.name} byte ${offset} bit ${bit}`;
          // Laid out before the flip (a header flipped after the plan was made) and after it.
          const after = await layOutChain(fs, file, chain);
          for (const plan of after === undefined ? [layout] : [layout, after]) {
            const files = offThreadCrcFiles();
            const previousStep = setOffThreadCrcStepBytes(readStep);
            const read = await offThread()
              .readScatteredAndCheck(plan.files, plan.imageBytes, plan.scratchBytes)
              .finally(() => setOffThreadCrcStepBytes(previousStep));
            expect(await read?.matches, where).toBe(false);
            expect(offThreadCrcFiles()).toBe(files + chain.length);
          }
          const damage = await new ChainReader(fs, file).image(chain);
          expect(damage, where).toMatchObject({ file: victim });
        },
      ),
      { numRuns: 80 },
    );
  }, 120_000);
});
