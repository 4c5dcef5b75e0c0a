/**
 * `actorstore-inspect <dir> repair`: the only way the inspector changes a damaged directory. It
 * takes the directory lock (refusing while another process has it open), copies every file before
 * it changes or removes it into `<dir>/repair-<time>/`, and says what it did and which commits it
 * dropped. docs/durability.md ("Repair") describes each step.
 */
import { copyFile, mkdir, readFile, rm, truncate } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import { crc32 } from "../durability/crc32";
import { DirectoryLock, type LockEnv, lockedError, readLockState } from "../durability/directory-lock";
import { damageOf, scanDirectory } from "../durability/directory-scan";
import { META_NAME, SEGMENT_RE } from "../durability/file-layout";
import { decodeRecords } from "../durability/record-codec";
import { systemClock } from "../util/clock";

/** Where repair reports. */
export interface RepairIo {
  out(line: string): void;
}

/** Most corruption sites one repair handles before it gives up (each pass fixes one). */
const MAX_PASSES = 64;

/**
 * Repairs `directory` so that it opens again, keeping a copy of everything it changes. Resolves
 * with whether the directory now opens; throws `ERR_LOCKED` while another process holds it.
 */
export async function repairDirectory(directory: string, io: RepairIo): Promise<boolean> {
  const fs = await import("node:fs/promises");
  const path = await import("node:path");
  const env: LockEnv = { fs, path, hostname: hostname(), pid: process.pid };
  const stamp = new Date(systemClock.now()).toISOString().replace(/[:.]/g, "-");
  const backupDir = join(directory, `repair-${stamp}`);
  let backups = 0;
  const file = (name: string) => join(directory, name);
  const backup = async (name: string) => {
    if (backups++ === 0) await mkdir(backupDir);
    await copyFile(file(name), join(backupDir, name));
  };
  const remove = async (name: string, why: string) => {
    await backup(name);
    await rm(file(name));
    io.out(`removed ${name} (${why})`);
  };

  // A damaged lock cannot say whether a process holds the directory; the user asked for repair.
  const state = await readLockState(directory, env);
  if (state.kind === "held" && state.live) throw lockedError(directory, state.holder);
  if (state.kind === "damaged") await remove(state.file, "a damaged lock file");
  const lock = await DirectoryLock.acquire(directory, env);
  let dropped = 0;
  try {
    const meta = await readFile(file(META_NAME)).catch(() => undefined);
    if (meta !== undefined) {
      const view = new DataView(meta.buffer, meta.byteOffset, meta.byteLength);
      if (meta.length < 4 || view.getUint32(0, true) !== crc32(meta, 4))
        await remove(META_NAME, "damaged metadata: a pending point-in-time restore request, if any, is dropped");
    }
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      let scan: Awaited<ReturnType<typeof scanDirectory>>;
      try {
        scan = await scanDirectory(directory, fs, path);
      } catch (error) {
        const damage = damageOf(error);
        if (damage === undefined || damage.kind === "unreachable") {
          io.out(`cannot repair: ${error instanceof Error ? error.message : String(error)}`);
          return false;
        }
        dropped += await cutLog(directory, damage.segment, damage.kind === "segment" ? damage.offset : 0, {
          backup,
          out: io.out,
        });
        continue;
      }
      for (const name of scan.tmpFiles) await remove(name, "an unfinished write");
      for (const s of scan.damagedSnapshots)
        await remove(s.name, "a snapshot that fails its checksum; the previous snapshot and the log replace it");
      if (scan.torn !== undefined) {
        await backup(scan.torn.segment);
        await truncate(file(scan.torn.segment), scan.torn.validBytes);
        io.out(
          `cut the torn tail of ${scan.torn.segment} (${scan.torn.fileBytes - scan.torn.validBytes} bytes of a write that was never confirmed)`,
        );
      }
      if (backups === 0) io.out("nothing to repair: the directory opens as it is");
      else {
        io.out(
          dropped === 0
            ? "no commit was dropped"
            : `dropped ${dropped} commit${dropped === 1 ? "" : "s"} that followed the damage`,
        );
        io.out(`copies of every file changed or removed are in ${backupDir}`);
      }
      return true;
    }
    io.out(`cannot repair: more than ${MAX_PASSES} damaged places`);
    return false;
  } finally {
    await lock.release();
  }
}

/**
 * Cuts the log at `offset` of `segment` and moves every later segment away (their commits can no
 * longer follow the cut). Returns how many decodable commits were dropped.
 */
async function cutLog(
  directory: string,
  segment: string,
  offset: number,
  io: { backup(name: string): Promise<void>; out(line: string): void },
): Promise<number> {
  const fs = await import("node:fs/promises");
  const names = (await fs.readdir(directory)).filter((n) => SEGMENT_RE.test(n)).sort();
  let dropped = 0;
  let from: number | undefined;
  let to: number | undefined;
  const count = (bytes: Uint8Array) => {
    const records = decodeRecords(bytes).records;
    dropped += records.length;
    for (const r of records) {
      from = Math.min(from ?? r.seq, r.seq);
      to = Math.max(to ?? r.seq, r.seq);
    }
  };
  const bytes = new Uint8Array(await fs.readFile(join(directory, segment)));
  await io.backup(segment);
  if (offset === 0) await fs.rm(join(directory, segment));
  else await fs.truncate(join(directory, segment), offset);
  io.out(
    offset === 0
      ? `removed ${segment} (damaged from its first byte, or after a gap in the log)`
      : `cut ${segment} at byte ${offset}, where the damage starts (${bytes.length - offset} bytes after it dropped)`,
  );
  for (const name of names.filter((n) => n > segment)) {
    count(new Uint8Array(await fs.readFile(join(directory, name))));
    await io.backup(name);
    await fs.rm(join(directory, name));
    io.out(`removed ${basename(name)} (its commits come after the damage)`);
  }
  if (from !== undefined) io.out(`commits ${from} to ${to} were in the removed segments`);
  return dropped;
}
