/**
 * The commands of `actorstore-inspect`, as a function from arguments to output lines and an exit
 * code, so that tests run them in-process. `inspect.ts` is the executable around it.
 */
import { realpath, stat, writeFile } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { inspect } from "node:util";
import { formatBookmark } from "../durability/bookmarks";
import type { CommitRecord } from "../durability/commit-record";
import { isObjectFile } from "../durability/file-layout";
import { streamHistory } from "../durability/persistence";
import type { EngineValue } from "../engine/engine";
import { loadSqlJsEngine } from "../engine/sqljs";
import { coreOf, ObjectStorage } from "../storage/object-storage";
import { type InspectTarget, type LocationOpener, loadOpener, resolveTarget } from "./open-location";
import { ReadOnlyPersistence } from "./read-only-persistence";
import { repairDirectory } from "./repair";

/** Where the inspector writes. */
export interface InspectIo {
  /** A line of results. */
  out(line: string): void;
  /** A line of diagnostics. */
  err(line: string): void;
}

/** Options of {@link runInspect}. */
export interface InspectOptions {
  /**
   * Opens the object's persistence from the location argument: inspect any adapter (the command
   * line's `--adapter <module>` does the same). Without it, the location is a directory or an
   * `s3://` bucket prefix.
   */
  open?: LocationOpener;
}

/** The usage text (`--help`). */
export const INSPECT_USAGE = `Usage: actorstore-inspect [--adapter <module>] <directory> <command> [arguments]

Inspects the persisted storage of one object: a directory written by
ObjectStorage.open({ directory }) or ObjectContext's storage.directory
(restore and repair need the process that owns it stopped; reading does not).
A bucket prefix works too:
s3://<bucket>/<prefix> with ACTORSTORE_S3_ENDPOINT, AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY set (reading never fences the live holder). Any other
adapter: --adapter <module>, a module whose default export (or openPersistence
export) is a function (location, mode) returning a persistence adapter;
<directory> is then passed to it as the location, and mode is "read" (must not
take the object from its live holder) or "write" (restore).

Commands:
  keys [--prefix <p>] [--limit <n>]  list keys in UTF-8 order, one a line (a key with a control
                                     character, or starting with ", as a JSON string)
  get <key>                          print a key's value (<key> as keys prints it; get -- <key>
                                     for a key that starts with - )
  sql "<read-only SQL>"              run one read-only statement (hidden _cf_ tables are readable;
                                     text with a control character is printed as a JSON string)
  bookmarks [--all]                  the newest 50 commits with their times and bookmarks (--all:
                                     every commit kept), then snapshots and a pending restore
  restore <bookmark>                 restore the object to a bookmark now; prints how to undo it
  export <file.sqlite> [--force]     write the database as a standard SQLite file (--force
                                     replaces an existing file)
  repair                             make a damaged directory openable again: copies every file
                                     it changes into <directory>/repair-<time>/ first, then says
                                     what it changed and which commits it dropped

keys, get, sql, bookmarks and export only read: they take no lock, run while the object is open,
and never change the directory. restore and repair refuse while another process has it open.`;

/** The commands, as `runInspect` dispatches them. */
const COMMANDS: readonly string[] = ["keys", "get", "sql", "bookmarks", "restore", "export", "repair"];

/** Most commits `bookmarks` prints without `--all`. */
const DEFAULT_BOOKMARK_LINES = 50;

/** A failure the user can fix by changing the command line: exit code 2 with the message. */
class UsageError extends Error {}

/**
 * Runs one inspector command. Resolves with the exit code: 0 on success, 1 when the command failed,
 * 2 for a malformed command line.
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * const code = await runInspect(["./data/room-1", "keys", "--prefix", "user:"], {
 *   out: (l) => lines.push(l),
 *   err: (l) => console.error(l),
 * });
 * ```
 */
export async function runInspect(
  argv: readonly string[],
  io: InspectIo,
  options: InspectOptions = {},
): Promise<number> {
  const beforeEnd = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
  if (argv.length === 0 || beforeEnd.includes("--help") || beforeEnd.includes("-h")) {
    (argv.length === 0 ? io.err : io.out)(INSPECT_USAGE);
    return argv.length === 0 ? 2 : 0;
  }
  let args = argv;
  let module: string | undefined;
  if (args[0] === "--adapter") {
    module = args[1];
    args = args.slice(2);
  }
  const [location, command, ...rest] = args;
  try {
    if (module === undefined && argv[0] === "--adapter") throw new UsageError("--adapter needs a module.");
    if (location === undefined || command === undefined) throw new UsageError("Missing the command.");
    // Checked before the location is opened, so that a mistyped command line is a usage error
    // whatever the location holds.
    if (!COMMANDS.includes(command))
      throw new UsageError(
        COMMANDS.includes(location)
          ? `The location comes first: actorstore-inspect <directory> ${location} …`
          : `Unknown command "${command}".`,
      );
    const opener = options.open ?? (module === undefined ? undefined : await loadOpener(module));
    const target = await resolveTarget(location, opener);
    switch (command) {
      case "keys":
        await keys(target, rest, io);
        return 0;
      case "get":
        return await get(target, rest, io);
      case "sql":
        await sql(target, rest, io);
        return 0;
      case "bookmarks":
        await bookmarks(target, rest, io);
        return 0;
      case "restore":
        // The undo line repeats how this object was reached, so that it runs as printed.
        await restore(target, rest, io, [...(module === undefined ? [] : ["--adapter", module]), location]);
        return 0;
      case "export":
        await exportDatabase(target, rest, io);
        return 0;
      case "repair":
        parseArgs(rest, [], 0);
        if (!target.directory)
          throw new Error(`repair works on a directory only; ${location} is not one (its store keeps its own copies).`);
        return (await repairDirectory(location, io)) ? 0 : 1;
      default:
        throw new UsageError(`Unknown command "${command}".`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`${e.message} Run actorstore-inspect --help for usage.`);
      return 2;
    }
    io.err(`error: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

// ------------------------------------------------------------------ commands

async function keys(target: InspectTarget, args: readonly string[], io: InspectIo): Promise<void> {
  const { flags } = parseArgs(args, ["prefix", "limit"], 0);
  const limit = flags.limit === undefined ? undefined : Number(flags.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
    throw new UsageError("--limit must be a positive integer.");
  await withReadOnly(target, async (storage) => {
    const listed = await storage.list({
      ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }),
      ...(limit === undefined ? {} : { limit }),
    });
    for (const key of listed.keys()) io.out(printable(key));
    io.err(`(${listed.size} key${listed.size === 1 ? "" : "s"})`);
  });
}

async function get(target: InspectTarget, args: readonly string[], io: InspectIo): Promise<number> {
  const { positional } = parseArgs(args, [], 1);
  const key = unprintable(positional[0] as string);
  return withReadOnly(target, async (storage) => {
    const value = await storage.get(key);
    if (value === undefined && !(await storage.list({ start: key, limit: 1 })).has(key)) {
      io.err(`No key ${JSON.stringify(key)} in this object.`);
      return 1;
    }
    io.out(inspect(value, { depth: null, colors: false, maxArrayLength: 100, maxStringLength: 10_000 }));
    return 0;
  });
}

async function sql(target: InspectTarget, args: readonly string[], io: InspectIo): Promise<void> {
  const { positional } = parseArgs(args, [], 1);
  const query = positional[0] as string;
  const image = await withReadOnly(target, async (storage) => coreOf(storage).engine.exportBytes());
  // The query runs on a scratch copy of the database with query_only on: SQLite itself refuses
  // every write, and even a statement that turned it off again could not reach the object's log.
  const engine = (await loadSqlJsEngine()).open(image);
  try {
    engine.exec("PRAGMA query_only = ON");
    const { statement, tail } = engine.prepareHead(query);
    if (statement === null) throw new UsageError("The SQL contains no statement.");
    try {
      if (tail.replace(/;/g, "").trim() !== "") {
        throw new UsageError("Run one statement at a time.");
      }
      const columns = statement.columnNames();
      // Rows are printed as they are stepped: a large result is never held whole.
      let rows = 0;
      try {
        while (statement.step()) {
          if (rows === 0 && columns.length > 0) io.out(columns.map(printable).join("\t"));
          io.out(statement.row().map(formatSqlValue).join("\t"));
          rows++;
        }
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        const after = rows === 0 ? "" : ` (after ${rows} row${rows === 1 ? "" : "s"})`;
        throw new Error(
          /readonly|query_only/i.test(message)
            ? `The inspector only runs read-only SQL (${message}). Change data through the object, or use restore.`
            : `${message}${after}`,
        );
      }
      if (rows === 0 && columns.length > 0) io.out(columns.map(printable).join("\t"));
      io.err(`(${rows} row${rows === 1 ? "" : "s"})`);
    } finally {
      statement.free();
    }
  } finally {
    engine.close();
  }
}

/** One line of the bookmarks listing. */
function describeCommit(r: CommitRecord): string {
  const parts = [
    r.restoreToSeq !== undefined ? `restore to seq ${r.restoreToSeq}` : undefined,
    r.reset ? "deleteAll" : undefined,
    r.kv.length > 0 ? `${r.kv.length} key${r.kv.length === 1 ? "" : "s"}` : undefined,
    r.sql.length > 0 ? `${r.sql.length} SQL write${r.sql.length === 1 ? "" : "s"}` : undefined,
    r.alarm !== undefined ? (r.alarm === null ? "alarm deleted" : `alarm ${iso(r.alarm)}`) : undefined,
  ].filter((p) => p !== undefined);
  return `${r.seq}\t${iso(r.timeMs)}\t${formatBookmark(r)}\t${parts.join(", ") || "-"}`;
}

async function bookmarks(target: InspectTarget, args: readonly string[], io: InspectIo): Promise<void> {
  const { flags } = parseArgs(args, ["all"], 0);
  const persistence = new ReadOnlyPersistence(await target.open("read"));
  try {
    const loaded = await persistence.load();
    const oldestSnapshot = loaded.snapshots[0];
    io.out("seq\ttime\tbookmark\tchange");
    const emptyDatabase = `0\t-\t${formatBookmark({ seq: 0, timeMs: 0 })}\tthe empty database`;
    if (oldestSnapshot !== undefined) {
      // Snapshot 0 is the empty database every object starts from.
      const what = oldestSnapshot.seq === 0 ? "the empty database" : "snapshot (earlier history pruned or compacted)";
      io.out(`${oldestSnapshot.seq}\t${iso(oldestSnapshot.timeMs)}\t${formatBookmark(oldestSnapshot)}\t${what}`);
    }
    // Streamed: with --all every line is printed as its record arrives; otherwise only the last
    // lines are kept, so a long log is never in memory at once.
    const all = flags.all === "true";
    const tail: string[] = [];
    let earlier = 0;
    let first = true;
    for await (const chunk of streamHistory(persistence, loaded)) {
      for (const r of chunk.records ?? []) {
        if (first && oldestSnapshot === undefined && r.seq === 1) io.out(emptyDatabase);
        first = false;
        if (all) io.out(describeCommit(r));
        else {
          tail.push(describeCommit(r));
          if (tail.length > DEFAULT_BOOKMARK_LINES) {
            tail.shift();
            earlier++;
          }
        }
      }
    }
    if (first && oldestSnapshot === undefined) io.out(emptyDatabase);
    if (earlier > 0) io.out(`…\t\t\t${earlier} earlier commits (--all shows them)`);
    for (const line of tail) io.out(line);
    for (const s of loaded.snapshots) {
      const delta = s.baseSeq === undefined ? "" : `, a delta on seq ${s.baseSeq}`;
      io.err(`snapshot at seq ${s.seq} (${iso(s.timeMs)}), ${s.bytes} bytes${delta}`);
    }
    const meta = persistence.pendingRestoreMeta;
    if (meta !== null) {
      const pending = JSON.parse(new TextDecoder().decode(meta)) as { restoreToSeq?: number };
      io.err(`pending restore: to seq ${String(pending.restoreToSeq)}, applied when the object next starts`);
    }
  } finally {
    await persistence.close();
  }
}

async function restore(
  target: InspectTarget,
  args: readonly string[],
  io: InspectIo,
  reachedWith: readonly string[],
): Promise<void> {
  const { positional } = parseArgs(args, [], 1);
  const bookmark = positional[0] as string;
  const storage = await ObjectStorage.open({ persistence: await target.open("write") });
  let undo: string;
  try {
    undo = await storage.onNextSessionRestoreBookmark(bookmark);
  } finally {
    await storage.close();
  }
  // Opening the next session is what applies a requested restore.
  const reopened = await ObjectStorage.open({ persistence: await target.open("write") });
  try {
    const now = await reopened.getCurrentBookmark();
    io.out(`restored to ${bookmark}`);
    io.out(`current bookmark ${now}`);
    io.out(`undo with: actorstore-inspect ${[...reachedWith, "restore", undo].map(shellQuote).join(" ")}`);
  } finally {
    await reopened.close();
  }
}

async function exportDatabase(target: InspectTarget, args: readonly string[], io: InspectIo): Promise<void> {
  const { flags, positional } = parseArgs(args, ["force"], 1);
  const file = positional[0] as string;
  const force = flags.force === "true";
  if (target.directory && (await isOwnFile(target.name, file)))
    throw new Error(
      `${file} would be one of the object's own files (log, snapshot, meta or lock) in ${target.name}: writing it would damage the object; export to a file outside that directory.`,
    );
  if (!force && (await stat(file).catch(() => undefined)) !== undefined)
    throw new Error(`${file} already exists; pass --force to replace it, or choose another file name.`);
  const image = await withReadOnly(target, async (storage) => coreOf(storage).engine.exportBytes());
  try {
    // "wx": a file that appeared meanwhile is not replaced either.
    await writeFile(file, image, { flag: force ? "w" : "wx" });
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === "EEXIST")
      throw new Error(`${file} already exists; pass --force to replace it, or choose another file name.`);
    if (code === "ENOENT")
      throw new Error(
        `${dirname(file)} does not exist: create it first, or export to a file in an existing directory.`,
      );
    if (code === "EISDIR") throw new Error(`${file} is a directory: give the name of a file to write.`);
    if (code === "EACCES" || code === "EPERM")
      throw new Error(`${file} cannot be written (${code}): choose a location this user may write.`);
    throw e;
  }
  io.out(`wrote ${image.byteLength} bytes to ${file} (a standard SQLite database; key-value data is in _cf_KV)`);
}

// ------------------------------------------------------------------ helpers

/** Whether `file` names one of the files of the object directory `directory` (a log segment, snapshot, meta or lock). */
async function isOwnFile(directory: string, file: string): Promise<boolean> {
  const name = basename(file);
  if (!isObjectFile(name)) return false;
  const [own, parent] = await Promise.all([
    realpath(directory).catch(() => resolve(directory)),
    realpath(dirname(resolve(file))).catch(() => undefined),
  ]);
  return parent === own;
}

async function withReadOnly<T>(target: InspectTarget, fn: (storage: ObjectStorage) => Promise<T>): Promise<T> {
  const storage = await ObjectStorage.open({
    persistence: new ReadOnlyPersistence(await target.open("read")),
  });
  try {
    return await fn(storage);
  } finally {
    // Nothing was written, so closing commits nothing.
    await storage.close();
  }
}

/**
 * Splits `--name value` / `--name=value` flags (a flag without a value reads `"true"`) from
 * positionals; after `--` every argument is a positional (`get -- --key`).
 */
function parseArgs(
  args: readonly string[],
  known: readonly string[],
  positionals: number,
): { flags: Record<string, string | undefined>; positional: string[] } {
  const flags: Record<string, string | undefined> = {};
  const positional: string[] = [];
  let optionsEnded = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--" && !optionsEnded) optionsEnded = true;
    else if (arg.startsWith("--") && arg.length > 2 && !optionsEnded) {
      const eq = arg.indexOf("=");
      const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
      if (!known.includes(name)) throw new UsageError(`Unknown option --${name}.`);
      if (eq >= 0) flags[name] = arg.slice(eq + 1);
      else if (name === "all" || name === "force") flags[name] = "true";
      else {
        const value = args[++i];
        if (value === undefined) throw new UsageError(`--${name} needs a value.`);
        flags[name] = value;
      }
    } else {
      positional.push(arg);
    }
  }
  if (positional.length !== positionals)
    throw new UsageError(
      positionals === 0
        ? `Unexpected argument "${positional[0]}".`
        : `Expected ${positionals} argument${positionals === 1 ? "" : "s"}, got ${positional.length}.`,
    );
  return { flags, positional };
}

/** `arg` as a POSIX shell reads it back: as it is when it has no special characters, else single-quoted. */
function shellQuote(arg: string): string {
  return /^[\w./:@%+=,-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`;
}

/**
 * Characters a terminal does not show as themselves: C0 and C1 controls (escape sequences, line
 * breaks, tabs), line and paragraph separators, bidirectional overrides, and lone surrogates.
 */
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069\p{Cs}]/u;

/**
 * `text` as one line that shows what it holds: unchanged when it is plain, else as a JSON string
 * (also when it starts with a quote, so that a plain text is never mistaken for a quoted one). A
 * stored key or value can then neither split a line nor send escape sequences to the terminal.
 */
function printable(text: string): string {
  if (!UNPRINTABLE.test(text) && !text.startsWith('"')) return text;
  return JSON.stringify(text).replace(
    /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu,
    (c) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, "0")}`,
  );
}

/** The text `printable` printed as `shown`: a JSON string decoded, anything else as it is. */
function unprintable(shown: string): string {
  if (!shown.startsWith('"')) return shown;
  try {
    const parsed: unknown = JSON.parse(shown);
    return typeof parsed === "string" ? parsed : shown;
  } catch {
    return shown;
  }
}

function formatSqlValue(value: EngineValue): string {
  if (value === null) return "NULL";
  if (value instanceof Uint8Array) {
    const hex = Array.from(value.subarray(0, 32), (b) => b.toString(16).padStart(2, "0")).join("");
    return `x'${hex}${value.byteLength > 32 ? "…" : ""}' (${value.byteLength} bytes)`;
  }
  return typeof value === "string" ? printable(value) : String(value);
}

function iso(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : "-";
}
