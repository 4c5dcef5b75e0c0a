/**
 * Membership of a cluster of hosts, recorded in a directory they share: each host writes
 * `<directory>/members/<id>.json` (`{ id, address, heartbeatMs }`) every `heartbeatMs`, and counts as
 * live while its last heartbeat is younger than `ttlMs`. A host that leaves deletes its file; one that
 * dies simply stops renewing it. No coordinator: each host reads the directory on its own.
 *
 * Membership is advisory: two hosts can briefly disagree (a heartbeat not yet seen, a paused
 * process). What keeps one writer per object is the store's own exclusion (see docs/hosting.md).
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import type { Clock, TimerHandle } from "../util/clock";

/** One member as recorded. */
export interface Member {
  /** The host's id (unique in the cluster). */
  readonly id: string;
  /** Where it serves forwarded requests (`http://127.0.0.1:8801`). */
  readonly address: string;
  /** Its last heartbeat, ms since the epoch on its clock. */
  readonly heartbeatMs: number;
}

/** Options of {@link DirectoryMembership}. */
export interface DirectoryMembershipOptions {
  /** The shared directory. */
  directory: string;
  /** This host's id: letters, digits, `-` and `_`. */
  id: string;
  /** This host's forwarding address. */
  address: string;
  clock: Clock;
  /** How often to renew the heartbeat and re-read the members. Default 1,000 ms. */
  heartbeatMs?: number;
  /** A member whose heartbeat is older than this is dead. Default 5,000 ms. */
  ttlMs?: number;
  /** Called after each refresh with the live members' ids (sorted). */
  onChange?: (live: readonly string[]) => void;
}

/** Membership over a shared directory (see the module comment). */
export class DirectoryMembership {
  readonly id: string;
  readonly address: string;
  readonly #dir: string;
  readonly #clock: Clock;
  readonly #heartbeatMs: number;
  readonly #ttlMs: number;
  readonly #onChange: ((live: readonly string[]) => void) | undefined;
  #members = new Map<string, Member>();
  #timer: TimerHandle | undefined;
  #joined = false;
  #lastLive = "";

  constructor(options: DirectoryMembershipOptions) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(options.id)) {
      throw new TypeError(`DirectoryMembership: id "${options.id}" must be 1-64 letters, digits, "-" or "_".`);
    }
    this.id = options.id;
    this.address = options.address;
    this.#dir = `${options.directory}/members`;
    this.#clock = options.clock;
    this.#heartbeatMs = options.heartbeatMs ?? 1_000;
    this.#ttlMs = options.ttlMs ?? 5_000;
    this.#onChange = options.onChange;
    if (!(this.#heartbeatMs > 0) || !(this.#ttlMs > this.#heartbeatMs)) {
      throw new TypeError("DirectoryMembership: heartbeatMs must be > 0 and ttlMs greater than heartbeatMs.");
    }
  }

  /** Records this host and starts the heartbeat. */
  async join(): Promise<void> {
    await mkdir(this.#dir, { recursive: true });
    this.#joined = true;
    await this.beat();
    this.#schedule();
  }

  /** Stops the heartbeat and deletes this host's record, so the others see it gone at their next refresh. */
  async leave(): Promise<void> {
    this.#joined = false;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    await rm(`${this.#dir}/${this.id}.json`, { force: true });
    await this.refresh();
  }

  /** Stops the heartbeat without deleting the record (what a crash looks like to the others). */
  stop(): void {
    this.#joined = false;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  /** Renews this host's heartbeat and re-reads the others. */
  async beat(): Promise<void> {
    if (this.#joined) {
      const record: Member = { id: this.id, address: this.address, heartbeatMs: this.#clock.now() };
      const tmp = `${this.#dir}/.${this.id}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify(record));
      await rename(tmp, `${this.#dir}/${this.id}.json`);
    }
    await this.refresh();
  }

  /** Re-reads the members' records. */
  async refresh(): Promise<void> {
    const members = new Map<string, Member>();
    let names: string[] = [];
    try {
      names = await readdir(this.#dir);
    } catch {
      names = [];
    }
    for (const name of names) {
      if (!name.endsWith(".json") || name.startsWith(".")) continue;
      try {
        const record = JSON.parse(await readFile(`${this.#dir}/${name}`, "utf8")) as Member;
        if (
          typeof record.id === "string" &&
          typeof record.address === "string" &&
          typeof record.heartbeatMs === "number"
        ) {
          members.set(record.id, record);
        }
      } catch {
        // Deleted or being replaced meanwhile: the next refresh sees it.
      }
    }
    this.#members = members;
    const live = this.live().join(",");
    if (live !== this.#lastLive) {
      this.#lastLive = live;
      this.#onChange?.(this.live());
    }
  }

  /** The ids of the live members (sorted): heartbeat younger than `ttlMs`; this host while joined. */
  live(): string[] {
    const now = this.#clock.now();
    const ids = [...this.#members.values()]
      .filter((m) => (m.id === this.id ? this.#joined : now - m.heartbeatMs < this.#ttlMs))
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
