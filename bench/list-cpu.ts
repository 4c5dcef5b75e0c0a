/**
 * `list({ start, limit: 1000 })` of two checkouts in one process, for paired comparisons of the
 * listing path: each checkout's storage is filled with `size` keys (100-character string values),
 * then given 60,000 random puts (as `npm run bench` runs `put` before `list-1000`, which leaves the
 * read cache holding scattered keys); then slices of 100 calls alternate between the two, and the
 * median CPU time of a slice (`process.cpuUsage`) of each is printed.
 *
 *   npx tsx bench/list-cpu.ts <checkout A> <checkout B> [AB|BA] [slices] [size]
 *
 * A checkout is a directory with `src/index.ts` (a copy of the tree at some commit, with
 * `node_modules` linked). `BA` fills B first: the storage filled first has measured 1.1–1.25×
 * faster in such a pairing, so run both orders (and a copy of one checkout against itself as a
 * control) and compare their geometric mean.
 */
import { performance } from "node:perf_hooks";

/** The storage calls used here. */
interface Listing {
  put(key: string, value: unknown): Promise<void>;
  sync(): Promise<void>;
  list(options: { start: string; limit: number }): Promise<Map<string, unknown>>;
  close(): Promise<void>;
}

const [dirA, dirB, order = "AB", slicesArg = "10", sizeArg = "100000"] = process.argv.slice(2);
if (dirA === undefined || dirB === undefined) {
  console.error("usage: bench/list-cpu.ts <checkout A> <checkout B> [AB|BA] [slices] [size]");
  process.exit(2);
}
const size = Number(sizeArg);
const slices = Number(slicesArg);
const value = "v".repeat(100);
const key = (i: number): string => `key-${String(i).padStart(8, "0")}`;

/** Opens a storage of the checkout at `dir`, filled and put to as described above. */
async function open(dir: string): Promise<Listing> {
  const mod = (await import(`${dir}/src/index.ts`)) as { ObjectStorage: { open(o: object): Promise<Listing> } };
  const s = await mod.ObjectStorage.open({ backend: "sqlite" });
  for (let b = 0; b < size; b += 1000) {
    for (let i = b; i < Math.min(size, b + 1000); i++) void s.put(key(i), value);
    await s.sync();
  }
  for (let r = 0; r < 12; r++) {
    for (let j = 0; j < 5000; j++) await s.put(key((r * 104_729 + j * 7919) % size), value);
    await s.sync();
  }
  return s;
}

const first = order === "BA" ? dirB : dirA;
const second = order === "BA" ? dirA : dirB;
const opened = new Map<string, Listing>();
opened.set(first, await open(first));
opened.set(second, await open(second));
const a = opened.get(dirA) as Listing;
const b = opened.get(dirB) as Listing;
const span = Math.max(1, size - 1000);
let call = 0;

/** CPU ms of 100 listings from new start keys. */
async function slice(s: Listing): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < 100; i++) {
    const m = await s.list({ start: key((call++ * 7919) % span), limit: 1000 });
    if (m.size !== Math.min(1000, size)) throw new Error(`got ${m.size} entries`);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

const started = performance.now();
await slice(a);
await slice(b);
const cpuA: number[] = [];
const cpuB: number[] = [];
for (let i = 0; i < slices; i++) {
  if (i % 2 === 0) {
    cpuA.push(await slice(a));
    cpuB.push(await slice(b));
  } else {
    cpuB.push(await slice(b));
    cpuA.push(await slice(a));
  }
}
const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1] as number;
console.log(
  `${size} keys, ${order === "BA" ? "B" : "A"} filled first: A ${median(cpuA).toFixed(1)} ms, B ${median(cpuB).toFixed(1)} ms ` +
    `CPU per 100 calls; B ${(median(cpuA) / median(cpuB)).toFixed(2)}× faster (${((performance.now() - started) / 1000).toFixed(0)} s)`,
);
await a.close();
await b.close();
