/**
 * Compares the two value codecs: encode + decode round trips per second on four typical values.
 * The numbers back the choice in `defaultCodec()` (src/storage/values/codec.ts, docs/values.md).
 *
 * Run: `npx tsx bench/codec.ts` (add `--ms=3000` for longer, steadier runs).
 */
import type { ValueCodec } from "../src/storage/values/codec";
import { loadV8Codec, structuredCodec } from "../src/storage/values/codec";

const budgetMs = Number(process.argv.find((a) => a.startsWith("--ms="))?.slice(5) ?? 1000);

function oneKbObject(): Record<string, unknown> {
  const items = [];
  for (let i = 0; i < 10; i++)
    items.push({ id: i, name: `item-${i}`, price: i * 1.25, tags: ["a", "b"], ok: i % 2 === 0 });
  return { user: "someone@example.com", createdAt: new Date(0), items };
}

const cases: [name: string, value: unknown][] = [
  ["small object", { id: 42, name: "counter", count: 7, active: true }],
  ["string (40 chars)", "the quick brown fox jumps over the lazy"],
  ["1 KB object", oneKbObject()],
  ["100 KB Uint8Array", new Uint8Array(100_000).map((_, i) => i & 0xff)],
];

/** Round trips per second over about `ms`. */
function measure(codec: ValueCodec, value: unknown, ms: number): number {
  let ops = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 50; i++) codec.decode(codec.encode(value));
    ops += 50;
    elapsed = performance.now() - start;
  }
  return (ops / elapsed) * 1000;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/**
 * The codecs take turns in short rounds and the median round counts, so a noisy neighbour or a GC
 * pause during one codec's turn does not decide the comparison.
 */
function compare(codecs: ValueCodec[], value: unknown): number[] {
  for (const codec of codecs) for (let i = 0; i < 2000; i++) codec.decode(codec.encode(value)); // JIT warm-up
  const rounds = 9;
  const samples = codecs.map((): number[] => []);
  for (let r = 0; r < rounds; r++) {
    for (const [i, codec] of codecs.entries()) samples[i]?.push(measure(codec, value, budgetMs / rounds));
  }
  return samples.map(median);
}

const v8 = await loadV8Codec();
const codecs = v8 === undefined ? [structuredCodec] : [structuredCodec, v8];
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
console.log(`node ${process.version}, ${budgetMs} ms per case; round trip = encode + decode`);
console.log(["case", ...codecs.map((c) => `${c.name} ops/s (bytes)`), "structured / v8"].join(" | "));
for (const [name, value] of cases) {
  const opsPerSec = compare(codecs, value);
  const cells = codecs.map((c, i) => `${fmt(opsPerSec[i] ?? 0)} (${c.encode(value).byteLength})`);
  const [structured, v8ops] = opsPerSec;
  const ratio = structured === undefined || v8ops === undefined ? "-" : (structured / v8ops).toFixed(2);
  console.log([name, ...cells, ratio].join(" | "));
}
