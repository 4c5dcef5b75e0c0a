/**
 * Crash test with the file adapter: a child process (worker.ts) runs a random workload and reports
 * every confirmed batch; the parent SIGKILLs it at random moments (also during startup, recovery,
 * segment rolls and snapshot writes) and checks, after every restart, that every confirmed batch is
 * present and no batch is half-applied. Kills also land while the directory lock is taken (startup)
 * and released (the worker closes and reopens now and then). It also truncates the newest log
 * segment at random offsets (a torn write: recovery cuts exactly the torn tail off) and flips bytes
 * in its last frame (corruption: opening refuses with ERR_CORRUPT and changes nothing). The second
 * lane writes most snapshots as deltas (incremental snapshots), so kills land in delta writes and
 * recovery goes through chains.
 *
 * One directory per lane is reused across kills: each child continues the previous one's history.
 * The worker is bundled once with esbuild (a plain `node bundle.mjs` starts several times faster
 * than `node --import tsx`). `CRASH_KILLS=2000 npx vitest run test/crash` runs longer.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { headName } from "../../src/durability/file-layout";
import { decodeRecords, encodedRecordSize } from "../../src/durability/record-codec";
import { coreOf, ObjectStorage } from "../../src/storage/object-storage";
import { decodeStoredValue } from "../../src/storage/values/codec";
import { systemClock } from "../../src/util/clock";
import { SplitMix64 } from "../../src/util/prng";
import { logBindingOf } from "../durability/directory-files";
import { bundleWorker, projectRoot } from "../helpers/bundle-worker";
import { type RecoveredState, summarize } from "./workload";

const KILLS = Number(process.env.CRASH_KILLS ?? 200);
const LANES = 2;
/** Damage the log tail after every this many kills of a lane. */
const DAMAGE_EVERY = 8;

// Inside node_modules so that the bundle's `import "sql.js"` resolves from the project.
const bundleDir = join(projectRoot, "node_modules", ".cache", "actorstore-crash");
const bundle = join(bundleDir, `worker-${process.pid}.mjs`);
// tmpfs when there is one: a process crash keeps the page cache either way, and fsync is cheap.
const scratch = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
const dirs: string[] = [];

beforeAll(() => bundleWorker("test/crash/worker.ts", bundle));

afterAll(async () => {
  await rm(bundle, { force: true });
  // CRASH_KEEP=1 keeps the directories for a post-mortem.
  if (!process.env.CRASH_KEEP) for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** Deterministic randomness for the parent's choices (seeded per lane; the seed is in failure messages). */
function rng(seed: number): (below: number) => number {
  const r = new SplitMix64();
  r.reseed(seed, 7);
  return (below) => Number(BigInt.asUintN(32, r.nextInt64()) % BigInt(below));
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => systemClock.setTimer(done, ms));
}

interface Life {
  /** The state the child reported right after opening (absent if killed before). */
  recovered?: RecoveredState;
  /** The highest batch it confirmed. */
  confirmed: number;
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

/** Runs one child and SIGKILLs it at a random moment: `afterOpenMs` after its first confirmed batch, or `atMs` after spawn. */
async function life(
  dir: string,
  seed: number,
  mode: string,
  snapshotEvery: number,
  kill: { afterOpenMs?: number; atMs?: number },
  deltas: boolean,
): Promise<Life> {
  const args = [bundle, dir, String(seed), mode, String(snapshotEvery), ...(deltas ? ["deltas"] : [])];
  const child: ChildProcess = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const result: Life = { confirmed: -1, signal: null, code: null, stderr: "" };
  child.stderr?.on("data", (b: Buffer) => {
    result.stderr += b.toString();
  });
  const exited = new Promise<void>((done) =>
    child.on("exit", (code, signal) => {
      result.code = code;
      result.signal = signal;
      done();
    }),
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  // "Opened" once the child reported its recovered state and confirmed its first batch: timing the
  // kill from there keeps every life making progress however slow the machine is (on a loaded one,
  // the first batch alone can take longer than the whole kill window).
  const opened = new Promise<void>((done) => {
    lines.on("line", (line) => {
      if (line.startsWith("S ")) {
        result.recovered = JSON.parse(line.slice(2)) as RecoveredState;
      } else if (line.startsWith("C ")) {
        result.confirmed = Math.max(result.confirmed, Number(line.slice(2)));
        done();
      }
    });
    void exited.then(() => done());
  });
  if (kill.atMs !== undefined) await sleep(kill.atMs);
  else {
    await opened;
    await sleep(kill.afterOpenMs ?? 0);
  }
  child.kill("SIGKILL");
  await exited;
  // Every line written before the kill is in the pipe: read it all before judging.
  await new Promise<void>((done) => {
    if (child.stdout?.readableEnded) done();
    else child.stdout?.on("end", done);
  });
  lines.close();
  return result;
}

async function newestSegment(dir: string): Promise<string | undefined> {
  const names = (await readdir(dir)).filter((n) => /^log-\d{16}\.seg$/.test(n)).sort();
  return names.at(-1);
}

async function newestSnapshotSeq(dir: string): Promise<number> {
  const seqs = (await readdir(dir))
    .map((n) => /^snap-(\d{16})-\d{16}-[0-9a-f]{8}(?:\.sqlite|-\d{16}\.delta)$/.exec(n)?.[1])
    .filter((x): x is string => x !== undefined)
    .map(Number);
  return Math.max(0, ...seqs);
}

/**
 * Damages the newest segment's tail (truncates it at a random offset within its last frames, or
 * flips a byte of its last frame) and returns the seq recovery must end at and the segment length
 * it must cut the file back to; `undefined` if the segment holds no frame.
 */
async function damageTail(
  dir: string,
  next: (below: number) => number,
): Promise<{ lastSeq: number; m: number | undefined; how: string; segment: string; validBytes: number } | undefined> {
  const segment = await newestSegment(dir);
  if (segment === undefined) return undefined;
  const path = join(dir, segment);
  const bytes = new Uint8Array(await readFile(path));
  const binding = await logBindingOf(dir);
  const whole = decodeRecords(bytes, 0, Infinity, false, binding);
  const last = whole.records.at(-1);
  const first = whole.records[0];
  if (last === undefined || first === undefined) return undefined;
  const firstSeq = Number(segment.slice(4, 20));
  // A head marker says this segment holds durable commits: cutting all of them is the loss of a
  // whole segment, which the marker makes the open refuse (ERR_CORRUPT, tested with the markers in
  // test/durability), not a torn tail. Damage here keeps the segment's first frame.
  const marked = (await readdir(dir)).includes(headName(firstSeq));
  if (marked && whole.records.length === 1) return undefined;
  // A snapshot is only ever of a confirmed commit: cutting the commits it holds is a lost log,
  // which the open refuses too (ERR_CORRUPT, tested in test/durability/lost-log-end.test.ts), not
  // a torn tail. Damage here keeps every frame up to the newest snapshot's seq.
  const snapshotSeq = await newestSnapshotSeq(dir);
  let keepAtLeast = marked ? encodedRecordSize(first) : 0;
  let covered = 0;
  for (const r of whole.records) if (r.seq <= snapshotSeq) covered += encodedRecordSize(r);
  keepAtLeast = Math.max(keepAtLeast, covered);
  const lastFrameStart = whole.validBytes - encodedRecordSize(last);
  let how: string;
  let damaged: Uint8Array;
  if (next(2) === 0 || last.seq <= snapshotSeq) {
    // Anywhere from a few frames back to the end of the valid data.
    const back = Math.min(whole.validBytes, encodedRecordSize(last) * (1 + next(4)));
    const cut = Math.max(keepAtLeast, whole.validBytes - 1 - next(back));
    damaged = bytes.subarray(0, cut);
    await truncate(path, cut);
    how = `truncated ${segment} from ${bytes.length} to ${cut} bytes`;
  } else {
    // A flipped byte in the last frame is corruption, not a torn write: opening must refuse and
    // change nothing. Then the damaged frame is dropped by hand, as a person (or repair) would.
    const at = lastFrameStart + next(whole.validBytes - lastFrameStart);
    const flipped = bytes.slice(0, whole.validBytes);
    flipped[at] = (flipped[at] as number) ^ (1 + next(255));
    await writeFile(path, flipped);
    how = `flipped byte ${at} of ${segment} (last frame ${lastFrameStart}..${whole.validBytes})`;
    await expect(ObjectStorage.open({ directory: dir }), how).rejects.toMatchObject({ code: "ERR_CORRUPT" });
    expect(new Uint8Array(await readFile(path)), how).toEqual(flipped);
    damaged = bytes.subarray(0, lastFrameStart);
    await truncate(path, lastFrameStart);
    how += ", then cut before the damaged frame";
  }
  const kept = decodeRecords(damaged, 0, Infinity, false, binding);
  const lastSeq = Math.max(kept.records.at(-1)?.seq ?? firstSeq - 1, snapshotSeq);
  // The batch the state at lastSeq must hold: the last value of key "a" written up to it.
  let m: number | undefined;
  for (const r of kept.records) {
    const a = r.kv.find((w) => w.key === "a");
    if (a?.value != null && r.seq <= lastSeq) m = decodeStoredValue(a.value, {}) as number;
  }
  return { lastSeq, m, how, segment, validBytes: kept.validBytes };
}

async function lane(index: number, kills: number): Promise<{ kills: number; damages: number; batches: number }> {
  const seed = 1000 * index + KILLS;
  const next = rng(seed);
  const dir = await mkdtemp(join(scratch, `actorstore-crash-${index}-`));
  dirs.push(dir);
  let confirmed = -1;
  let damages = 0;
  let sawDelta = false;
  const where = (i: number) => `lane ${index} (seed ${seed}), life ${i}, dir ${dir}`;
  for (let i = 0; i < kills; i++) {
    const mode = i % 2 === 0 ? "storage" : "context";
    // The delta lane snapshots often too: a delta needs two snapshots in one (short) life.
    const snapshotEvery = (index === 1 ? [5, 25, 200] : [25, 200, 10_000])[next(3)] as number;
    // Mostly while the workload runs; sometimes during startup and recovery.
    const kill = next(6) === 0 ? { atMs: next(400) } : { afterOpenMs: next(120) };
    // Lane 1 writes most snapshots as deltas (incremental), so kills land in delta writes too.
    const result = await life(dir, seed * 100_000 + i, mode, snapshotEvery, kill, index === 1);
    expect(result.signal, `${where(i)}: the child died on its own: ${result.stderr}`).toBe("SIGKILL");
    const recovered = result.recovered;
    if (recovered !== undefined) {
      expect(recovered.consistent, `${where(i)}: half-applied batch: ${recovered.detail}`).toBe(true);
      expect(recovered.m, `${where(i)}: lost confirmed batches: ${recovered.detail}`).toBeGreaterThanOrEqual(confirmed);
    }
    confirmed = Math.max(confirmed, result.confirmed);
    sawDelta ||= (await readdir(dir)).some((n) => n.endsWith(".delta"));

    if (i % DAMAGE_EVERY === DAMAGE_EVERY - 1) {
      const damage = await damageTail(dir, next);
      if (damage === undefined) continue;
      damages++;
      const storage = await ObjectStorage.open({ directory: dir });
      const state = await summarize(storage);
      expect(state.consistent, `${where(i)}: after ${damage.how}: ${state.detail}`).toBe(true);
      expect(coreOf(storage).lastSeq, `${where(i)}: after ${damage.how}`).toBe(damage.lastSeq);
      if (damage.m !== undefined) expect(state.m, `${where(i)}: after ${damage.how}: ${state.detail}`).toBe(damage.m);
      await storage.close();
      // The damaged tail was cut off durably (the file now ends at the last whole frame).
      if (existsSync(join(dir, damage.segment)))
        expect((await stat(join(dir, damage.segment))).size, damage.how).toBe(damage.validBytes);
      // We destroyed confirmed batches ourselves: what survives is the new baseline.
      confirmed = state.m;
    }
  }
  const storage = await ObjectStorage.open({ directory: dir });
  const final = await summarize(storage);
  await storage.close();
  expect(final.consistent, `${where(kills)}: ${final.detail}`).toBe(true);
  expect(final.m).toBeGreaterThanOrEqual(confirmed);
  // The delta lane did write deltas (a kill may land before any).
  if (index === 1 && kills >= 20) expect(sawDelta, where(kills)).toBe(true);
  return { kills, damages, batches: final.m };
}

describe("crash (file adapter, SIGKILL)", () => {
  test("crash: every confirmed batch survives SIGKILL, no batch is half-applied, a damaged tail is cut off", async () => {
    const perLane = Math.ceil(KILLS / LANES);
    const results = await Promise.all(Array.from({ length: LANES }, (_, i) => lane(i, perLane)));
    const total = results.reduce((n, r) => n + r.kills, 0);
    expect(total).toBeGreaterThanOrEqual(KILLS);
    // Enough happened for the test to mean something.
    for (const r of results) {
      expect(r.damages).toBeGreaterThan(0);
      expect(r.batches).toBeGreaterThan(r.kills);
    }
  }, 600_000);
});
