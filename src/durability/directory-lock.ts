/**
 * One writer per directory: the lock the file adapter takes before it reads or writes an object's
 * directory. docs/durability.md ("One writer per directory") states the protocol and why it is safe.
 *
 * The lock is a sequence of **generations**: files `lock-<n, 16 digits>`, each created exactly once,
 * with its whole content, by `link()`ing a private temp file to that name (which fails if the name
 * exists: an atomic compare-and-set on the name). The newest generation is the lock's state: a
 * holder (pid, host, boot, process start, since when, token) or `free`. Nobody ever rewrites or
 * deletes the newest generation; it is only superseded by creating the next one, so two processes
 * racing to take over the same stale (or free) generation `n` both try to create `n + 1` and
 * exactly one succeeds.
 *
 * Node modules are passed in by {@link openFilePersistence}, so browser bundles never see them.
 *
 * @packageDocumentation
 */
import { ActorStoreError } from "../errors";
import { systemClock } from "../util/clock";
import { crc32 } from "./crc32";
import { isErrno, pad16 } from "./file-layout";

type Fs = typeof import("node:fs/promises");
type Path = typeof import("node:path");

/** The file operations of the lock (a subset of `node:fs/promises`). @internal */
export interface LockFs {
  readdir(directory: string): Promise<string[]>;
  readFile(file: string, encoding: "utf8"): Promise<string>;
  writeFile(file: string, text: string, options: { flag: "wx" }): Promise<void>;
  link(existing: string, name: string): Promise<void>;
  unlink(file: string): Promise<void>;
}

/** The Node modules and process facts the lock uses. @internal */
export interface LockEnv {
  fs: Fs;
  /** The lock's own file operations, when not `fs` (see {@link syncLockFs}). */
  lockFs?: LockFs;
  path: Path;
  hostname: string;
  pid: number;
}

/**
 * The lock's file operations done synchronously (behind the same promise interface). Lock files are
 * a few hundred bytes and are touched about ten times per open and close of a directory; each
 * asynchronous call is a round trip through libuv's thread pool (`readFile` alone is four), which
 * made opening and closing a directory twice as slow as before the lock. Synchronous calls on such
 * files take microseconds on a local disk; on a network file system they would block the thread
 * for as long as the server takes, which the rest of the adapter avoids (its data files stay
 * asynchronous).
 */
export function syncLockFs(fs: typeof import("node:fs")): LockFs {
  return {
    readdir: async (directory) => fs.readdirSync(directory),
    readFile: async (file, encoding) => fs.readFileSync(file, encoding),
    writeFile: async (file, text, options) => fs.writeFileSync(file, text, options),
    link: async (existing, name) => fs.linkSync(existing, name),
    unlink: async (file) => fs.unlinkSync(file),
  };
}

const lockFsOf = (env: LockEnv): LockFs => env.lockFs ?? env.fs;

/** Who holds (or last held) a directory. */
export interface LockHolder {
  /** The holder's process id. */
  pid: number;
  /** The holder's host name. */
  host: string;
  /** When the holder took the lock (ms since epoch). */
  sinceMs: number;
}

/** What a lock generation file says. @internal */
interface LockContent extends LockHolder {
  state: "held" | "free";
  /** The kernel's boot id, when known: a holder from an earlier boot is certainly gone. */
  boot: string;
  /** The holder process's start time (clock ticks since boot, from /proc), when known: tells a reused pid apart. */
  start: string;
  /** Random: which acquisition this is. */
  token: string;
}

/** What {@link readLockState} found. */
export type LockState =
  | { kind: "none" }
  | { kind: "free"; file: string }
  | { kind: "held"; file: string; holder: LockHolder; live: boolean }
  | { kind: "damaged"; file: string };

export const LOCK_RE = /^lock-(\d{16})$/;
const LOCK_TMP_RE = /^lock-[0-9a-f]{16}\.tmp$/;
const lockName = (generation: number): string => `lock-${pad16(generation)}`;
/** Attempts before giving up on a lock that keeps changing under us (many processes racing). */
const MAX_ATTEMPTS = 64;

/**
 * Locks held (or being taken) by this process: directory and token of each acquisition. A second storage
 * of this process on the same directory is refused like another process would be. The directory is
 * named by what it is on disk (device and inode), not by the path it was opened through: a path
 * through a symbolic link names the same directory, while a copy of it (with the same lock file
 * inside) is another one.
 */
const heldHere = new Set<string>();
const heldKey = (directory: string, token: string): string => `${directory}\0${token}`;

/** What `directory` is on disk (device and inode), or its path when it cannot be looked up. */
async function identityOf(directory: string, env: LockEnv): Promise<string> {
  try {
    const { dev, ino } = await env.fs.stat(directory, { bigint: true });
    return ino === 0n ? directory : `${dev}:${ino}`;
  } catch {
    return directory;
  }
}

/**
 * A held directory lock. {@link DirectoryLock.stillHeld} is the fence check a writer can run before
 * a write that must not land after a takeover.
 */
export class DirectoryLock {
  readonly directory: string;
  readonly holder: LockHolder;
  readonly #env: LockEnv;
  readonly #generation: number;
  readonly #token: string;
  /** The directory's {@link identityOf}, which this lock is registered under in `heldHere`. */
  readonly #identity: string;
  #released = false;

  private constructor(directory: string, env: LockEnv, generation: number, content: LockContent, identity: string) {
    this.directory = directory;
    this.#identity = identity;
    this.#env = env;
    this.#generation = generation;
    this.#token = content.token;
    this.holder = { pid: content.pid, host: content.host, sinceMs: content.sinceMs };
  }

  /**
   * Takes the lock of `directory` (which must exist), or rejects with `ERR_LOCKED` naming the live
   * holder (another process, or another storage of this process), or `ERR_CORRUPT` when the lock
   * file is damaged. A holder that is gone (killed) is taken over.
   */
  static async acquire(directory: string, env: LockEnv): Promise<DirectoryLock> {
    const { path } = env;
    const fs = lockFsOf(env);
    const [self, identity] = await Promise.all([describeSelf(env), identityOf(directory, env)]);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const state = await readLockState(directory, env);
      let next = 1;
      if (state.kind === "damaged") throw damagedLock(directory, state.file);
      if (state.kind === "held" && state.live) throw lockedError(directory, state.holder);
      if (state.kind !== "none") next = generationOf(state.file) + 1;
      const content: LockContent = {
        ...self,
        state: "held",
        sinceMs: Math.floor(systemClock.now()),
        token: randomToken(),
      };
      // Registered before the link so that a concurrent acquisition in this process that reads
      // our new generation sees a live holder, not a stale one with our own pid.
      heldHere.add(heldKey(identity, content.token));
      let created: boolean;
      let cleanup: Promise<void>;
      try {
        ({ created, cleanup } = await createOnceDeferred(directory, lockName(next), content, env));
      } catch (error) {
        heldHere.delete(heldKey(identity, content.token));
        throw error;
      }
      if (!created) {
        heldHere.delete(heldKey(identity, content.token));
        await cleanup;
        continue; // someone else created generation `next` first: look again
      }
      // A process that listed the directory long ago may have created an older generation again
      // after we deleted it; a newer one than ours means we lost a race we could not see. (The
      // listing overlaps the removal of our temp file, which it may still show: skipped below.)
      const [names] = await Promise.all([fs.readdir(directory), cleanup]);
      let newest = 0;
      for (const name of names) newest = Math.max(newest, generationOf(name));
      if (newest > next) {
        heldHere.delete(heldKey(identity, content.token));
        await removeIfPresent(fs, path.join(directory, lockName(next)));
        continue;
      }
      // Older generations (and temp files of crashed acquisitions) are history: remove them.
      const history = names.filter((name) => {
        const generation = generationOf(name);
        return (generation > 0 && generation < next) || (LOCK_TMP_RE.test(name) && name !== tempName(content.token));
      });
      await Promise.all(history.map((name) => removeIfPresent(fs, path.join(directory, name))));
      return new DirectoryLock(directory, env, next, content, identity);
    }
    throw new ActorStoreError(
      "ERR_LOCKED",
      `Could not lock ${directory}: its lock changed ${MAX_ATTEMPTS} times while this process tried to take it. Only one process may open a directory at a time.`,
    );
  }

  /** The generation this lock created: the file adapter's writer epoch. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * The newest generation when it is newer than this lock's (someone took the lock over: this
   * holder is fenced), else `undefined`. One directory listing: cheap enough to run after every
   * write round.
   */
  async newerGeneration(): Promise<number | undefined> {
    const newest = await newestGeneration(this.directory, this.#env);
    return newest > this.#generation ? newest : undefined;
  }

  /** Whether this lock is still the newest generation and ours (false after release or a takeover). */
  async stillHeld(): Promise<boolean> {
    if (this.#released) return false;
    const state = await readLockState(this.directory, this.#env);
    if (state.kind !== "held" || generationOf(state.file) !== this.#generation) return false;
    return heldHere.has(heldKey(this.#identity, this.#token));
  }

  /** Releases the lock (idempotent): the next generation says `free`. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    heldHere.delete(heldKey(this.#identity, this.#token));
    const free: LockContent = {
      state: "free",
      pid: this.holder.pid,
      host: this.holder.host,
      boot: "",
      start: "",
      sinceMs: Math.floor(systemClock.now()),
      token: randomToken(),
    };
    const { path } = this.#env;
    const fs = lockFsOf(this.#env);
    // If the next generation exists, someone took the lock over (believing us gone): leave theirs.
    const { created, cleanup } = await createOnceDeferred(
      this.directory,
      lockName(this.#generation + 1),
      free,
      this.#env,
    ).catch(() => ({ created: false, cleanup: Promise.resolve() }));
    const superseded = created ? removeIfPresent(fs, path.join(this.directory, lockName(this.#generation))) : undefined;
    // A temp file left behind is removed by the next acquisition.
    await Promise.all([cleanup.catch(() => undefined), superseded]);
  }
}

/**
 * Reads the newest lock generation of `directory` without taking or changing anything (the
 * inspector's view). `live` says whether the holder is running: same host and boot, the pid exists,
 * is no zombie, and started when the lock says; a holder on another host counts as live.
 */
export async function readLockState(directory: string, env: LockEnv): Promise<LockState> {
  const { path } = env;
  const fs = lockFsOf(env);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const generation = await newestGeneration(directory, env);
    if (generation === 0) return { kind: "none" };
    const file = lockName(generation);
    let text: string;
    try {
      text = await fs.readFile(path.join(directory, file), "utf8");
    } catch (error) {
      if (isErrno(error, "ENOENT")) continue; // superseded and removed meanwhile
      throw error;
    }
    // Every generation is linked into place only after its whole content was written, so no
    // running process can ever see one empty. An empty one is what a power loss leaves when the
    // name reached the disk and the content did not: whoever wrote it died with the machine, and
    // nobody holds the directory.
    if (text.length === 0) return { kind: "free", file };
    const content = parseLock(text);
    if (content === undefined) return { kind: "damaged", file };
    if (content.state === "free") return { kind: "free", file };
    const holder = { pid: content.pid, host: content.host, sinceMs: content.sinceMs };
    return { kind: "held", file, holder, live: await isLive(content, directory, env) };
  }
  return { kind: "none" };
}

/** Whether `name` is a lock file (a generation or an acquisition's temp file). @internal */
export function isLockFile(name: string): boolean {
  return LOCK_RE.test(name) || LOCK_TMP_RE.test(name);
}

/** The `ERR_LOCKED` error naming a holder. @internal */
export function lockedError(directory: string, holder: LockHolder): ActorStoreError {
  const since = Number.isFinite(holder.sinceMs) ? new Date(holder.sinceMs).toISOString() : "an unknown time";
  return new ActorStoreError(
    "ERR_LOCKED",
    `The directory ${directory} is open in process ${holder.pid} on host ${holder.host} (since ${since}). One process and one storage may have a directory open at a time: close that storage first. actorstore-inspect can read the directory meanwhile.`,
  );
}

function damagedLock(directory: string, file: string): ActorStoreError {
  return new ActorStoreError(
    "ERR_CORRUPT",
    `The lock file ${file} in ${directory} is damaged, so it cannot tell whether another process has the directory open. If none has, run actorstore-inspect ${directory} repair (it removes the damaged lock file and keeps a copy).`,
  );
}

async function newestGeneration(directory: string, env: LockEnv): Promise<number> {
  let newest = 0;
  for (const name of await lockFsOf(env).readdir(directory)) {
    const m = LOCK_RE.exec(name);
    if (m !== null) newest = Math.max(newest, Number(m[1]));
  }
  return newest;
}

/** The generation a lock file name holds, or 0 for any other name. */
const generationOf = (file: string): number => Number(LOCK_RE.exec(file)?.[1] ?? 0);

/**
 * Creates `name` with `content`, whole, or reports that it exists. The content goes into a private
 * temp file first; `link()` then publishes it under the final name atomically and fails with EEXIST
 * if the name is taken, so a reader never sees a half-written lock. Where hard links are not
 * supported, an exclusive create (`wx`) is used instead. The removal of the temp file is left
 * running (`cleanup`, which the caller must await) so that the caller's next step overlaps it: every
 * open and close of a directory takes this path.
 */
async function createOnceDeferred(
  directory: string,
  name: string,
  content: LockContent,
  env: LockEnv,
): Promise<{ created: boolean; cleanup: Promise<void> }> {
  const { path } = env;
  const fs = lockFsOf(env);
  const text = formatLock(content);
  const tmp = path.join(directory, tempName(content.token));
  await fs.writeFile(tmp, text, { flag: "wx" });
  let created: boolean;
  try {
    await fs.link(tmp, path.join(directory, name));
    created = true;
  } catch (error) {
    const cleanup = removeIfPresent(fs, tmp);
    if (isErrno(error, "EEXIST")) return { created: false, cleanup };
    // Our temp file was removed by a concurrent acquisition's clean-up: try again from the top.
    if (isErrno(error, "ENOENT")) return { created: false, cleanup };
    try {
      if (!(isErrno(error, "EPERM") || isErrno(error, "ENOTSUP") || isErrno(error, "ENOSYS"))) throw error;
      await fs.writeFile(path.join(directory, name), text, { flag: "wx" });
      return { created: true, cleanup };
    } catch (inner) {
      await cleanup;
      if (isErrno(inner, "EEXIST")) return { created: false, cleanup };
      throw inner;
    }
  }
  return { created, cleanup: removeIfPresent(fs, tmp) };
}

const tempName = (token: string): string => `lock-${token}.tmp`;

const MAGIC = "actorstore-lock 1";

function formatLock(content: LockContent): string {
  const body = JSON.stringify(content);
  return `${MAGIC}\n${body}\n${crc32(new TextEncoder().encode(body)).toString(16).padStart(8, "0")}\n`;
}

function parseLock(text: string): LockContent | undefined {
  const lines = text.split("\n");
  if (lines.length !== 4 || lines[0] !== MAGIC || lines[3] !== "") return undefined;
  const body = lines[1] as string;
  if (lines[2] !== crc32(new TextEncoder().encode(body)).toString(16).padStart(8, "0")) return undefined;
  try {
    const c = JSON.parse(body) as Partial<LockContent>;
    if (
      (c.state === "held" || c.state === "free") &&
      // A process id is positive: kill(0) and kill(-n) would test a process group, not a process.
      Number.isSafeInteger(c.pid) &&
      (c.pid as number) > 0 &&
      typeof c.host === "string" &&
      typeof c.boot === "string" &&
      typeof c.start === "string" &&
      typeof c.sinceMs === "number" &&
      typeof c.token === "string"
    )
      return c as LockContent;
  } catch {
    // fall through
  }
  return undefined;
}

/** This process's own facts: constant while it runs, so read once. */
let self: Promise<Pick<LockContent, "boot" | "start">> | undefined;
let selfPid = 0;

async function describeSelf(env: LockEnv): Promise<Pick<LockContent, "pid" | "host" | "boot" | "start">> {
  if (self === undefined || selfPid !== env.pid) {
    selfPid = env.pid;
    self = (async () => ({ boot: await bootId(env), start: (await processStart(env.pid, env))?.start ?? "" }))();
  }
  return { pid: env.pid, host: env.hostname, ...(await self) };
}

async function isLive(content: LockContent, directory: string, env: LockEnv): Promise<boolean> {
  // Another host: its processes cannot be checked from here, so assume the worst.
  if (content.host !== env.hostname) return true;
  const boot = await bootId(env);
  if (content.boot !== "" && boot !== "" && content.boot !== boot) return false; // rebooted since
  if (content.pid === env.pid) return heldHere.has(heldKey(await identityOf(directory, env), content.token));
  try {
    process.kill(content.pid, 0);
  } catch (error) {
    if (isErrno(error, "ESRCH")) return false;
    if (!isErrno(error, "EPERM")) throw error; // EPERM: it exists, owned by another user
  }
  const now = await processStart(content.pid, env);
  if (now === undefined) return true; // no /proc: the pid exists, trust it
  if (now.zombie) return false; // killed, not yet reaped by its parent
  return content.start === "" || now.start === content.start;
}

let boot: Promise<string> | undefined;

/** The kernel boot id (Linux), or "" when unknown; read once per process. */
function bootId(env: LockEnv): Promise<string> {
  boot ??= lockFsOf(env)
    .readFile("/proc/sys/kernel/random/boot_id", "utf8")
    .then(
      (text) => text.trim(),
      () => "",
    );
  return boot;
}

/** A process's start time and whether it is a zombie (Linux /proc), or undefined when unknown. */
async function processStart(pid: number, env: LockEnv): Promise<{ start: string; zombie: boolean } | undefined> {
  let stat: string;
  try {
    stat = await lockFsOf(env).readFile(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid …": comm may contain spaces and parentheses, so split after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const start = fields[19]; // field 22 of the whole line
  if (state === undefined || start === undefined) return undefined;
  return { start, zombie: state === "Z" || state === "X" };
}

/**
 * Removes a file that may already be gone (superseded lock files race with other processes'
 * clean-up). One `unlink`: `fs.rm` would look the file up first, on every open and close.
 */
async function removeIfPresent(fs: LockFs, file: string): Promise<void> {
  try {
    await fs.unlink(file);
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw error;
  }
}

function randomToken(): string {
  const bytes = new Uint8Array(8);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
