/**
 * Membership of a cluster of hosts, recorded where they meet: each host writes its record
 * (`{ id, address, beat, heartbeatMs }`) every `heartbeatMs`, and counts another as live while that
 * host's record keeps changing: a record seen unchanged for `ttlMs` (on the observer's own clock, as of
 * its last read of the records) is a dead host's. A record seen for the first time counts as live if its writer's `heartbeatMs` is younger
 * than `ttlMs` on the observer's clock (the only place where clocks are compared, and only until the
 * record's next change). A record listed but unreadable now (a failed GET, a file error other than its
 * deletion) counts as unchanged, not gone: a live host does not die of one failed read. A host that
 * leaves deletes its record; one that dies simply stops renewing it.
 * No coordinator: each host reads the records on its own.
 *
 * Two places to meet: a shared directory ({@link DirectoryMembership}, `<directory>/members/<id>.json`)
 * or a shared bucket ({@link BucketMembership}, `<prefix>members/<id>.json`).
 *
 * Membership is advisory: two hosts can briefly disagree (a heartbeat not yet seen, a paused
 * process). What keeps one writer per object is the store's own exclusion (see docs/hosting.md).
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import type { Clock, TimerHandle } from "../util/clock";
import type { ClusterBucket } from "./bucket";

/** One member as recorded. */
export interface Member {
  /** The host's id (unique in the cluster). */
  readonly id: string;
  /** Where it serves forwarded requests (`http://127.0.0.1:8801`). */
  readonly address: string;
  /** Its last heartbeat, ms since the epoch on its clock. */
  readonly heartbeatMs: number;
  /** How many heartbeats it wrote (changes with every one). */
  readonly beat?: number;
}

/** Where member records are kept. @internal */
export interface MemberRecords {
  write(record: Member): Promise<void>;
  remove(id: string): Promise<void>;
  read(): Promise<Member[]>;
}

/** Options of a membership. */
export interface MembershipOptions {
  /** This host's id: letters, digits, `-` and `_`. */
  id: string;
  /** This host's forwarding address. */
  address: string;
  clock: Clock;
  /** How often to renew the heartbeat and re-read the members. Default 1,000 ms. */
  heartbeatMs?: number;
  /** A member whose record has not changed for this long is dead. Default 5,000 ms. */
  ttlMs?: number;
  /** Called after each refresh with the live members' ids (sorted) when they changed. */
  onChange?: (live: readonly string[]) => void;
}

/** Options of {@link DirectoryMembership}. */
export interface DirectoryMembershipOptions extends MembershipOptions {
  /** The shared directory. */
  directory: string;
}

/** Options of {@link BucketMembership}. */
export interface BucketMembershipOptions extends MembershipOptions {
  /** The cluster's bucket. @internal */
  bucket: ClusterBucket;
}

function isMember(record: unknown): record is Member {
  const r = record as Member;
  return (
    typeof r === "object" &&
    r !== null &&
    typeof r.id === "string" &&
    typeof r.address === "string" &&
    typeof r.heartbeatMs === "number"
  );
}

/** Membership over shared records (see the module comment). */
export class Membership {
  /** This host's id in the cluster. */
  readonly id: string;
  /** This host's forwarding address, as the other hosts read it. */
  readonly address: string;
  readonly #records: MemberRecords;
  readonly #clock: Clock;
  readonly #heartbeatMs: number;
  readonly #ttlMs: number;
  readonly #onChange: ((live: readonly string[]) => void) | undefined;
  #members = new Map<string, Member>();
  /** When (on this host's clock) each member's record was last seen to change. */
  #changedAt = new Map<string, { beat: string; atMs: number }>();
  /**
   * When (on this host's clock) the records were last read: liveness is judged as of then, so a host
   * that did not look for a while (its process was paused, its event loop stalled) does not count
   * the others dead for that time; it needs to read again first.
   */
  #readAtMs = Number.NEGATIVE_INFINITY;
  #timer: TimerHandle | undefined;
  #joined = false;
  #beat = 0;
  #lastLive = "";

  constructor(records: MemberRecords, options: MembershipOptions) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(options.id)) {
      throw new TypeError(`Membership: id "${options.id}" must be 1-64 letters, digits, "-" or "_".`);
    }
    this.id = options.id;
    this.address = options.address;
    this.#records = records;
    this.#clock = options.clock;
    this.#heartbeatMs = options.heartbeatMs ?? 1_000;
    this.#ttlMs = options.ttlMs ?? 5_000;
    this.#onChange = options.onChange;
    if (!(this.#heartbeatMs > 0) || !(this.#ttlMs > this.#heartbeatMs)) {
      throw new TypeError("Membership: heartbeatMs must be > 0 and ttlMs greater than heartbeatMs.");
    }
  }

  /** Records this host and starts the heartbeat. */
  async join(): Promise<void> {
    this.#joined = true;
    await this.beat();
    this.#schedule();
  }

  /** Stops the heartbeat and deletes this host's record, so the others see it gone at their next refresh. */
  async leave(): Promise<void> {
    this.stop();
    await this.#records.remove(this.id);
    await this.refresh();
  }

  /** Stops the heartbeat without deleting the record (what a crash looks like to the others). */
  stop(): void {
    this.#joined = false;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Renews this host's heartbeat and re-reads the others (also when the write failed: a host that
   * cannot write its record still follows the others). Rejects with the write's error.
   */
  async beat(): Promise<void> {
    try {
      if (this.#joined) {
        await this.#records.write({
          id: this.id,
          address: this.address,
          heartbeatMs: this.#clock.now(),
          beat: ++this.#beat,
        });
      }
    } finally {
      await this.refresh();
    }
  }

  /** Re-reads the members' records. */
  async refresh(): Promise<void> {
    const members = new Map<string, Member>();
    for (const record of await this.#records.read()) if (isMember(record)) members.set(record.id, record);
    const now = this.#clock.now();
    const changedAt = new Map<string, { beat: string; atMs: number }>();
    for (const m of members.values()) {
      const beat = `${m.beat ?? ""}/${m.heartbeatMs}`;
      const seen = this.#changedAt.get(m.id);
      if (seen === undefined) {
        // First sight: the writer's clock is the only hint of the record's age.
        changedAt.set(m.id, { beat, atMs: Math.min(now, m.heartbeatMs) });
      } else changedAt.set(m.id, seen.beat === beat ? seen : { beat, atMs: now });
    }
    this.#members = members;
    this.#changedAt = changedAt;
    this.#readAtMs = now;
    const live = this.live().join(",");
    if (live !== this.#lastLive) {
      this.#lastLive = live;
      this.#onChange?.(this.live());
    }
  }

  /**
   * The ids of the live members (sorted): a record that had changed within `ttlMs` when the records
   * were last read (not `ttlMs` before now: a record that was not looked at is not seen unchanged);
   * this host while joined.
   */
  live(): string[] {
    const now = this.#readAtMs;
    const ids = [...this.#members.values()]
      .filter((m) =>
        m.id === this.id
          ? this.#joined
          : now - (this.#changedAt.get(m.id)?.atMs ?? Number.NEGATIVE_INFINITY) < this.#ttlMs,
      )
      .map((m) => m.id);
    if (this.#joined && !ids.includes(this.id)) ids.push(this.id);
    return ids.sort();
  }

  /** A member's record as last read. */
  member(id: string): Member | undefined {
    return id === this.id ? { id, address: this.address, heartbeatMs: this.#clock.now() } : this.#members.get(id);
  }

  #schedule(): void {
    if (!this.#joined) return;
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      void this.beat()
        .catch(() => {})
        .finally(() => this.#schedule());
    }, this.#heartbeatMs);
  }
}

/** Membership over a shared directory: `<directory>/members/<id>.json`. */
export class DirectoryMembership extends Membership {
  constructor(options: DirectoryMembershipOptions) {
    const dir = `${options.directory}/members`;
    let made = false;
    // Two beats can overlap (a timer's and a caller's): each writes its own temporary file.
    let writes = 0;
    /** Each record's text as last read (by file name). */
    let lastRead = new Map<string, string>();
    super(
      {
        async write(record) {
          if (!made) await mkdir(dir, { recursive: true });
          made = true;
          const tmp = `${dir}/.${record.id}.${process.pid}.${++writes}.tmp`;
          await writeFile(tmp, JSON.stringify(record));
          await rename(tmp, `${dir}/${record.id}.json`);
        },
        async remove(id) {
          await rm(`${dir}/${id}.json`, { force: true });
        },
        async read() {
          let names: string[] = [];
          try {
            names = await readdir(dir);
          } catch (e) {
            // No directory yet: no members. Any other failure fails the refresh (the view is kept),
            // rather than reading as every other member gone at once.
            if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
          }
          const out: Member[] = [];
          const read = new Map<string, string>();
          for (const name of names) {
            if (!name.endsWith(".json") || name.startsWith(".")) continue;
            let text: string;
            try {
              text = await readFile(`${dir}/${name}`, "utf8");
            } catch (e) {
              // Deleted meanwhile (the host left): gone. Otherwise (EMFILE, EIO) the record as last
              // read, so it looks unchanged, not gone: a live host does not die of one failed read.
              const last = (e as NodeJS.ErrnoException).code === "ENOENT" ? undefined : lastRead.get(name);
              if (last === undefined) continue;
              text = last;
            }
            read.set(name, text);
            out.push(...parsed(text));
          }
          lastRead = read;
          return out;
        },
      },
      options,
    );
  }
}

/**
 * Membership over a shared bucket: `<prefix>members/<id>.json`. A record unchanged for ten times
 * `ttlMs` (a host that died long ago) is deleted by whoever sees it, so the listing stays short.
 */
export class BucketMembership extends Membership {
  constructor(options: BucketMembershipOptions) {
    const bucket = options.bucket;
    const stale = new Map<string, { text: string; sinceMs: number }>();
    const clock = options.clock;
    const ttl = options.ttlMs ?? 5_000;
    super(
      {
        write: (record) => bucket.put(`members/${record.id}.json`, JSON.stringify(record)),
        remove: (id) => bucket.delete(`members/${id}.json`),
        async read() {
          const keys = (await bucket.list("members/")).filter((k) => /^members\/[A-Za-z0-9_-]{1,64}\.json$/.test(k));
          const out: Member[] = [];
          await Promise.all(
            keys.map(async (key) => {
              let text: string | null;
              try {
                text = await bucket.get(key);
              } catch {
                // Listed but not readable now (the store failed every attempt): the record as last
                // read, so it looks unchanged, not gone. A live host does not die of one failed
                // read; one whose record stays unreadable for ttlMs is dead, as one that stopped.
                const last = stale.get(key);
                if (last !== undefined) out.push(...parsed(last.text));
                return;
              }
              if (text === null) {
                stale.delete(key);
                return;
              }
              const previous = stale.get(key);
              if (previous?.text !== text) stale.set(key, { text, sinceMs: clock.now() });
              else if (clock.now() - previous.sinceMs > 10 * ttl) {
                stale.delete(key);
                await bucket.delete(key).catch(() => {});
                return;
              }
              out.push(...parsed(text));
            }),
          );
          // Records no longer listed (their hosts left) are forgotten.
          for (const key of stale.keys()) if (!keys.includes(key)) stale.delete(key);
          return out;
        },
      },
      options,
    );
  }
}

/** A member record's text as a list of one record, or none (a torn or foreign record is ignored). */
function parsed(text: string): Member[] {
  try {
    return [JSON.parse(text) as Member];
  } catch {
    return [];
  }
}
