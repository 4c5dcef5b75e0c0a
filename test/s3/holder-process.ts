/**
 * A holder of one object in its own process, for the kill -9 / SIGSTOP tests: loads, then appends
 * commits one after another, printing `confirmed <seq>` once each append resolved. On ERR_FENCED it
 * prints `fenced` and exits 3; on another failure it prints `failed <code>` and reloads.
 * Usage: node --import tsx test/s3/holder-process.ts '<options json>' <tag>
 */
import { isFencedError } from "../../src/durability/persistence";
import { s3Persistence } from "../../src/s3/index";

const options = JSON.parse(process.argv[2] as string);
const tag = process.argv[3] as string;
const persistence = s3Persistence(options);
const encoder = new TextEncoder();

let loaded: Awaited<ReturnType<typeof persistence.load>>;
try {
  loaded = await persistence.load();
} catch (error) {
  // A newer holder claimed the object while this one was still opening it.
  if (!isFencedError(error)) throw error;
  console.log("fenced");
  process.exit(3);
}
console.log(`loaded ${loaded.lastSeq} epoch ${persistence.epoch}`);
let seq = loaded.lastSeq + 1;
for (;;) {
  try {
    await persistence.append([
      { seq, timeMs: Date.now(), reset: false, sql: [], kv: [{ key: "h", value: encoder.encode(`${tag}:${seq}`) }] },
    ]);
    console.log(`confirmed ${seq}`);
    seq++;
  } catch (error) {
    if (isFencedError(error)) {
      console.log("fenced");
      process.exit(3);
    }
    console.log(`failed ${(error as { code?: string }).code ?? "?"}`);
    for (;;) {
      try {
        loaded = await persistence.load();
        seq = loaded.lastSeq + 1;
        break;
      } catch (e) {
        if (isFencedError(e)) {
          console.log("fenced");
          process.exit(3);
        }
      }
    }
  }
}
