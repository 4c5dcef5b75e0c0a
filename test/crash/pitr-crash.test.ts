/**
 * Point-in-time recovery against SIGKILL, with the file adapter: a child process (pitr-worker.ts)
 * runs batches that also replace everything (`deleteAll()`), set and delete the alarm, request
 * restores to earlier bookmarks and reopen to apply them; the parent SIGKILLs it at random moments
 * (while it opens, applies a restore, writes, snapshots, prunes) and checks, at every open, that
 * the state is exactly one the model allows:
 *
 * - a restore request that was recorded (its call resolved) is applied by the next open that
 *   finishes, whatever open was killed before: the state is exactly the bookmark's;
 * - otherwise the last confirmed state, or the batch in flight whole, or (a request in flight when
 *   the child died) the requested state.
 *
 * At the end, bookmarks of confirmed states (and the bookmarks restores returned, naming the state
 * before them) still restore exactly those states, unless retention pruned them, and
 * getBookmarkForTime at a confirmed commit's time names that commit or a later one of the same ms.
 * States are compared by a hash of the whole dump (schema, rows and rowids, keys, alarm).
 *
 * Each lane reuses one directory across kills. `PITR_CRASH_LIVES=200 npx vitest run
 * test/crash/pitr-crash.test.ts` runs longer; the seed is in every failure message.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseBookmark } from "../../src/durability/bookmarks";
import { openFilePersistence } from "../../src/durability/file-persistence";
import { setDeltaLimits } from "../../src/durability/snapshot-delta";
import { ObjectStorage } from "../../src/storage/object-storage";
import { systemClock } from "../../src/util/clock";
import { SplitMix64 } from "../../src/util/prng";
import { bundleWorker, projectRoot } from "../helpers/bundle-worker";
import { stateHash } from "./pitr-state";

const LIVES = Number(process.env.PITR_CRASH_LIVES ?? 12);
/** Lane 0 prunes (a short window, full images); lane 1 keeps its history and writes deltas. */
const LANES = [
  { retentionMs: 1500, snapshotEvery: 5, deltas: false },
  { retentionMs: 3_600_000, snapshotEvery: 6, deltas: true },
] as const;

// Inside node_modules so that the bundle's `import "sql.js"` resolves from the project.
const bundleDir = join(projectRoot, "node_modules", ".cache", "actorstore-crash");
const bundle = join(bundleDir, `pitr-worker-${process.pid}.mjs`);
const scratch = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
const dirs: string[] = [];

beforeAll(() => bundleWorker("test/crash/pitr-worker.ts", bundle));

afterAll(async () => {
  setDeltaLimits(undefined);
  await rm(bundle, { force: true });
  if (!process.env.CRASH_KEEP) for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

function rng(seed: number): (below: number) => number {
  const r = new SplitMix64();
  r.reseed(seed, 7);
  return (below) => Number(BigInt.asUintN(32, r.nextInt64()) % BigInt(below));
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => systemClock.setTimer(done, ms));
}

/** What the parent knows of a lane: the model the next open is checked against. */
class Model {
  /** State hash of every bookmark the child reported (confirmed states, and states before restores). */
  readonly stateOf = new Map<string, string>();
  /** Bookmarks of confirmed states, in order. */
  readonly confirmed: string[] = [];
  /** Every bookmark the child may restore to (confirmed states and undo bookmarks). */
  readonly bookmarks: string[] = [];
  /** The last state an open found or a batch confirmed (undefined before the first open). */
  current: string | undefined;
  /** The state the batch in flight leads to. */
  pending: string | undefined;
  /** The state a restore request in flight (or recorded) leads to. */
  requested: string | undefined;
  /** The request's call resolved: the next open must apply it. */
  recorded = false;
  restores = 0;
  opens = 0;
  #before: string | undefined;
  #issued: { id: number; hash: string } | undefined;
  nextId = 1;

  /** The states the next open may find. */
  allowed(): string[] {
    if (this.recorded) return [this.requested as string];
    return [this.current, this.pending, this.requested].filter((x): x is string => x !== undefined);
  }

  /** Applies one line of the child; returns a complaint, if any. */
  line(line: string): string | undefined {
    const [kind, a = "", b = ""] = line.split(" ");
    switch (kind) {
      case "S": {
        const allowed = this.allowed();
        this.opens++;
        const first = this.current === undefined && !this.recorded;
        const wrong = !first && !allowed.includes(a);
        const complaint = wrong
          ? `an open found state ${a}; allowed ${allowed.join(", ")}${this.recorded ? " (a recorded restore was not applied)" : ""}`
          : undefined;
        this.current = a;
        this.pending = this.requested = undefined;
        this.recorded = false;
        return complaint;
      }
      case "P":
        this.#issued = { id: Number(a), hash: b };
        this.pending = b;
        this.nextId = Number(a) + 1;
        return undefined;
      case "C":
        if (this.#issued?.id !== Number(a)) return `batch ${a} confirmed before it was issued`;
        this.current = this.#issued.hash;
        this.pending = undefined;
        this.stateOf.set(b, this.current);
        this.confirmed.push(b);
        this.bookmarks.push(b);
        return undefined;
      case "Q":
        this.requested = this.stateOf.get(a);
        this.#before = this.current;
        return this.requested === undefined ? `a restore to unknown bookmark ${a}` : undefined;
      case "R":
        this.recorded = true;
        this.restores++;
        this.stateOf.set(a, this.#before as string);
        this.bookmarks.push(a);
        return undefined;
      case "X":
        this.requested = undefined;
        return undefined;
      default:
        return `unexpected line ${line}`;
    }
  }
}

/** Runs one child and SIGKILLs it: `afterOpenMs` after its first open finished, or `atMs` after spawn. */
async function life(
  args: string[],
  model: Model,
  kill: { afterOpenMs?: number; atMs?: number },
): Promise<{ complaints: string[]; signal: NodeJS.Signals | null; stderr: string }> {
  const child: ChildProcess = spawn(process.execPath, [bundle, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (b: Buffer) => {
    stderr += b.toString();
  });
  let signal: NodeJS.Signals | null = null;
  const exited = new Promise<void>((done) =>
    child.on("exit", (_code, s) => {
      signal = s;
      done();
    }),
  );
  const complaints: string[] = [];
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const opened = new Promise<void>((done) => {
    lines.on("line", (line) => {
      const complaint = model.line(line);
      if (complaint !== undefined) complaints.push(complaint);
      if (line.startsWith("S ")) done();
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
  await new Promise<void>((done) => {
    if (child.stdout?.readableEnded) done();
    else child.stdout?.on("end", done);
  });
  lines.close();
  return { complaints, signal, stderr };
}

async function lane(index: number, lives: number): Promise<Model> {
  const { retentionMs, snapshotEvery, deltas } = LANES[index] as (typeof LANES)[number];
  const seed = 1000 * index + LIVES;
  const next = rng(seed);
  const dir = await mkdtemp(join(scratch, `actorstore-pitr-crash-${index}-`));
  dirs.push(dir);
  const bookmarksFile = `${dir}.bookmarks.json`;
  dirs.push(bookmarksFile);
  const model = new Model();
  const where = (i: number) => `lane ${index} (seed ${seed}), life ${i}, dir ${dir}`;
  for (let i = 0; i < lives; i++) {
    await writeFile(bookmarksFile, JSON.stringify(model.bookmarks.slice(-200)));
    const args = [
      dir,
      String(seed * 100_000 + i),
      String(model.nextId),
      String(retentionMs),
      String(snapshotEvery),
      bookmarksFile,
    ];
    if (deltas) args.push("deltas");
    // Mostly while it runs (restores, batches, snapshots); sometimes while it opens.
    const kill = next(6) === 0 ? { atMs: next(600) } : { afterOpenMs: next(1500) };
    const result = await life(args, model, kill);
    expect(result.signal, `${where(i)}: the child died on its own: ${result.stderr}`).toBe("SIGKILL");
    expect(result.complaints, where(i)).toEqual([]);
  }

  // The parent opens last: the same checks, then the bookmarks.
  if (deltas) setDeltaLimits({ chain: 6, fraction: 8 });
  const open = async () =>
    ObjectStorage.open({
      persistence: await openFilePersistence(dir, { segmentBytes: 4096 }),
      snapshotEveryRecords: snapshotEvery,
      retentionMs,
    });
  let storage = await open();
  const final = await stateHash(storage);
  if (model.current !== undefined || model.recorded)
    expect(model.allowed(), `${where(lives)}: the last open`).toContain(final);
  const sample = model.bookmarks.filter(() => next(Math.max(1, Math.floor(model.bookmarks.length / 6))) === 0);
  let restored = 0;
  for (const bookmark of sample) {
    try {
      await storage.onNextSessionRestoreBookmark(bookmark);
    } catch (e) {
      // Only a bookmark older than the window may be refused, and only in the lane that prunes.
      expect(e, `${where(lives)}: restoring ${bookmark}`).toMatchObject({ code: "ERR_BOOKMARK" });
      expect(retentionMs, `${where(lives)}: ${bookmark} refused: ${(e as Error).message}`).toBeLessThan(60_000);
      continue;
    }
    await storage.close();
    storage = await open();
    expect(await stateHash(storage), `${where(lives)}: bookmark ${bookmark} restored another state`).toBe(
      model.stateOf.get(bookmark),
    );
    restored++;
    // getBookmarkForTime at that commit's time names it, or a later commit of the same ms (in the
    // lane that keeps its history: in the other, that time has left the window by now).
    if (retentionMs < 60_000 || !model.confirmed.includes(bookmark)) continue;
    const { seq, timeMs } = parseBookmark(bookmark);
    const named = parseBookmark(await storage.getBookmarkForTime(timeMs));
    expect(named.seq, `${where(lives)}: getBookmarkForTime(${timeMs}) for ${bookmark}`).toBeGreaterThanOrEqual(seq);
    expect(named.timeMs, `${where(lives)}: getBookmarkForTime(${timeMs}) for ${bookmark}`).toBeLessThanOrEqual(timeMs);
  }
  await storage.close();
  setDeltaLimits(undefined);
  if (index === 1) expect(restored, where(lives)).toBeGreaterThan(0);
  return model;
}

describe("point-in-time recovery (file adapter, SIGKILL)", () => {
  test("crash: a recorded restore is applied by the next open, every open finds a confirmed state, bookmarks still restore it", async () => {
    const perLane = Math.ceil(LIVES / LANES.length);
    const models = await Promise.all(LANES.map((_, i) => lane(i, perLane)));
    // Enough happened for the test to mean something.
    expect(models.reduce((n, m) => n + m.restores, 0)).toBeGreaterThan(0);
    for (const m of models) expect(m.confirmed.length).toBeGreaterThan(perLane);
  }, 600_000);
});
