/**
 * `npm run demo`: an inventory object with reservations, run through the object context, printing a
 * short transcript. It touches every part of the library: key-value and SQL storage, a transaction,
 * the input gate under concurrent events, an alarm that fails once and is retried with backoff,
 * a bookmark and a point-in-time restore, and file persistence (so a second run finds the data).
 *
 *   npm run demo                     # persists in ./.actorstore-demo/
 *   npm run demo -- --memory         # in memory, touches no disk
 *   npm run demo -- --dir /tmp/x     # persists elsewhere
 *   npm run demo -- --cluster        # two hosts on loopback, one killed (examples/cluster-demo.ts;
 *                                    # --bucket '<json>' runs them over a bucket)
 *
 * Time is a FakeClock started at the wall-clock time, so the 30-second reservation expiry and the
 * alarm's 2-second retry backoff happen instantly instead of making you wait.
 */
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { ObjectContext } from "../src/context/object-context";
import { ActorStoreError, FakeClock } from "../src/index";
import { Inventory, type InventoryEnv, RESERVATION_TTL_MS, type ReserveResult } from "./inventory";

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Where the object's commit log and snapshots go; `undefined` = in memory. */
  directory: string | undefined;
  /** Where transcript lines go. */
  print: (line: string) => void;
}

const CATALOGUE = [
  { sku: "widget", name: "Widget", stock: 3 },
  { sku: "gadget", name: "Gadget", stock: 5 },
] as const;

/**
 * Runs the demo once.
 *
 * @example
 * ```ts
 * await runDemo({ directory: "./.actorstore-demo/warehouse-1", print: console.log });
 * ```
 */
export async function runDemo({ directory, print }: DemoOptions): Promise<void> {
  const started = performance.now();
  // Examples may read the wall clock; the library itself never does (it takes a Clock).
  const clock = new FakeClock(Date.now());
  const env: InventoryEnv = { now: () => clock.now() };
  const warehouse = await ObjectContext.create(Inventory, {
    id: "warehouse-1",
    env,
    clock,
    // Jitter of the retry backoff is injectable; a fixed value keeps the transcript stable.
    random: () => 0.5,
    storage: directory === undefined ? {} : { directory },
  });
  const t0 = clock.now();
  const at = (ms: number) => `+${((ms - t0) / 1000).toFixed(1)} s`;

  print("actorstore demo: an inventory object with reservations");
  print(
    directory === undefined
      ? "storage: in memory (--memory); nothing survives this process"
      : `storage: commit log and snapshots in ${directory}`,
  );

  // 1. Key-value: a run counter that only file persistence keeps across runs.
  const { run, reservationsOnRecord } = await warehouse.call<{ run: number; reservationsOnRecord: number }>("startRun");
  print(
    run === 1
      ? "[1] run #1 of this object: a fresh database"
      : `[1] run #${run} of this object: the data survived (${run - 1} earlier run(s), ${reservationsOnRecord} reservations on record)`,
  );

  // 2. SQL: an upsert of the catalogue.
  await warehouse.call("restock", CATALOGUE);
  print(`[2] SQL: restocked ${fmtStock(await warehouse.call("stock"))}`);

  // 3. The input gate: ten concurrent read-modify-write requests, no lock in the object's code.
  const before = await warehouse.call<number>("visits");
  const responses = await Promise.all(
    Array.from({ length: 10 }, () => warehouse.fetch(new Request("http://warehouse/visit"))),
  );
  const seen = await Promise.all(responses.map(async (r) => ((await r.json()) as { visits: number }).visits));
  const after = await warehouse.call<number>("visits");
  print(
    `[3] input gate: 10 concurrent GET /visit moved visits ${before} -> ${after} (each saw a distinct value: ${
      new Set(seen).size === 10 ? "yes" : "no"
    })`,
  );

  // 4. A transaction under contention: five buyers, three widgets.
  const results = await Promise.all(
    Array.from({ length: 5 }, () => warehouse.call<ReserveResult>("reserve", "widget", 1)),
  );
  const won = results.filter((r) => r.ok).length;
  const refused = results.filter((r): r is { ok: false; reason: string } => !r.ok);
  print(
    `[4] transaction: 5 concurrent reserve(widget, 1) with 3 in stock -> ${won} reserved, ${refused.length} refused (${refused[0]?.reason ?? "-"}); ${fmtStock(await warehouse.call("stock"))}`,
  );

  // 5. The alarm: reservations expire after 30 s; the handler fails once and is retried.
  const alarmAt = await (await warehouse.storage()).getAlarm();
  print(`[5] alarm: set for ${alarmAt === null ? "never" : at(alarmAt)} (reservation expiry); advancing the clock`);
  const firstAttempt = warehouse.alarms.history.length;
  await clock.advance(RESERVATION_TTL_MS);
  await warehouse.alarms.idle();
  const retry = warehouse.alarms.next();
  if (retry !== null) print(`    retry planned at ${at(retry.runAtMs)} (backoff ${retry.runAtMs - clock.now()} ms)`);
  await clock.advance(5_000);
  await warehouse.alarms.idle();
  for (const attempt of warehouse.alarms.history.slice(firstAttempt)) {
    // Print when each attempt was due: `atMs` is when it finished, and with real file I/O the fake
    // clock may already have moved on by then.
    const dueMs = attempt.info.isRetry && retry !== null ? retry.runAtMs : attempt.info.scheduledTime;
    print(
      `    attempt ${attempt.info.retryCount + 1} (due ${at(dueMs)}): ${attempt.ok ? "ok" : "failed (supplier API unavailable)"}, retryCount=${attempt.info.retryCount}`,
    );
  }
  print(
    `    after the alarm: ${fmtStock(await warehouse.call("stock"))}; alarm now ${String(await (await warehouse.storage()).getAlarm())}`,
  );

  // 6. A bookmark, then a mistake.
  const bookmark = await warehouse.call<string>("bookmark");
  await warehouse.call("zeroAllStock");
  print(`[6] bookmark ${bookmark}; then a bad bulk update: ${fmtStock(await warehouse.call("stock"))}`);

  // 7. Point-in-time restore: request it, the object aborts, the next event sees the old state.
  try {
    await warehouse.call("restoreTo", bookmark);
  } catch (e) {
    print(`[7] restore requested; the object reset itself ("${(e as Error).message}")`);
  }
  print(`    next event, new session: ${fmtStock(await warehouse.call("stock"))} (resets so far: ${warehouse.resets})`);

  await warehouse.close();
  print(
    `[8] done in ${((performance.now() - started) / 1000).toFixed(1)} s.${directory === undefined ? "" : " Run it again: the run counter and visits continue."}`,
  );
}

function fmtStock(stock: unknown): string {
  return Object.entries(stock as Record<string, number>)
    .map(([sku, n]) => `${sku}=${n}`)
    .join(", ");
}

/** What the command line asks for (see the usage at the top of this file). */
export interface DemoArgs {
  /** `--cluster`: two hosts on loopback (examples/cluster-demo.ts). */
  cluster: boolean;
  /** Where the object persists; `undefined` in memory (`--memory`), or the cluster's default. */
  directory: string | undefined;
  /** `--bucket '<json>'` (with `--cluster`): the bucket the hosts share. */
  bucket: string | undefined;
}

export const DEMO_USAGE =
  "usage: npm run demo -- [--memory | --dir <path>] | --cluster [--dir <path> | --bucket '<json>']";

/**
 * Reads the demo's flags: `--memory`, `--dir <path>`, `--cluster`, `--bucket <json>`. Anything else,
 * a flag without its value or two that exclude each other throws an Error saying which, so a typo
 * (`--memroy`) never runs the demo somewhere the user did not ask for.
 */
export function parseDemoArgs(argv: readonly string[]): DemoArgs {
  let memory = false;
  let cluster = false;
  let dir: string | undefined;
  let bucket: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new Error(`${flag} needs a value. ${DEMO_USAGE}`);
      return v;
    };
    if (flag === "--memory") memory = true;
    else if (flag === "--cluster") cluster = true;
    else if (flag === "--dir") dir = value();
    else if (flag === "--bucket") bucket = value();
    else throw new Error(`Unknown option ${flag}. ${DEMO_USAGE}`);
  }
  if (memory && (dir !== undefined || cluster))
    throw new Error(`--memory runs one object in memory: it takes no --dir or --cluster. ${DEMO_USAGE}`);
  if (bucket !== undefined && !cluster) throw new Error(`--bucket is for --cluster. ${DEMO_USAGE}`);
  if (cluster) return { cluster, directory: dir === undefined ? undefined : resolve(dir), bucket };
  return {
    cluster,
    directory: memory ? undefined : resolve(dir ?? ".actorstore-demo", "warehouse-1"),
    bucket: undefined,
  };
}

/**
 * Ends a failed run with exit code 1. An `ActorStoreError` (a directory that cannot be used, or one
 * another process has open) says what to do in its message: that line alone, no stack trace.
 * Anything else is a bug in the demo or the library, printed whole.
 */
function reportFailure(e: unknown): void {
  console.error(e instanceof ActorStoreError ? `ActorStoreError ${e.code}: ${e.message}` : e);
  process.exitCode = 1;
}

const isMain = import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("/demo.ts");
if (isMain) {
  let args: DemoArgs | undefined;
  try {
    args = parseDemoArgs(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    process.exitCode = 2;
  }
  if (args?.cluster) {
    // Two hosts on loopback sharing a directory (or a bucket, with --bucket): see examples/cluster-demo.ts.
    const { directory, bucket } = args;
    import("./cluster-demo")
      .then((m) =>
        m.runClusterDemo(
          directory,
          (line) => console.log(line),
          m.bucketArgument(bucket === undefined ? [] : ["--bucket", bucket]),
        ),
      )
      .catch(reportFailure);
  } else if (args !== undefined) {
    runDemo({ directory: args.directory, print: (line) => console.log(line) }).catch(reportFailure);
  }
}
