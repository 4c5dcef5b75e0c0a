/**
 * `actorstore-inspect <dir> repair`: the only way the inspector changes a damaged directory. It
 * takes the directory lock (refusing while another process has it open), copies every file before
 * it changes or removes it into `<dir>/repair-<time>/`, and says what it did and which commits it
 * dropped. docs/durability.md ("Repair") describes each step.
 */
import { copyFile, mkdir, open, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import { crc32 } from "../durability/crc32";
import { DirectoryLock, type LockEnv, lockedError, readLockState } from "../durability/directory-lock";
import { damageOf, scanDirectory } from "../durability/directory-scan";
import {
  DELTA_RE,
  HEAD_RE,
  logCutName,
  META_NAME,
  SEGMENT_RE,
  SNAPSHOT_RE,
  segmentName,
} from "../durability/file-layout";
import { metaChecks } from "../durability/file-meta";
import { frameBinding, logBindingSeed, logBoundSeq } from "../durability/log-binding";
import { type ObjectIdentity, parseIdentity } from "../durability/object-identity";
import { type FrameBinding, scanFrames } from "../durability/record-decoder";
import { nameCrcOf } from "../durability/snapshot-name-crc";
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
  // Each copy is on disk (its bytes and its name) before the original changes: a power loss during
  // a repair must not take both.
  const backup = async (name: string) => {
    if (backups++ === 0) {
      await mkdir(backupDir);
      await syncPath(directory);
    }
    const copy = join(backupDir, name);
    await copyFile(file(name), copy);
    await syncPath(copy);
    await syncPath(backupDir);
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
  let cut = false;
  try {
    // Good when its CRC covers no identity or one of the directory's (which one stays is decided
    // below; a meta bound to one that goes, goes with it).
    const meta = await readFile(file(META_NAME)).catch(() => undefined);
    const identities = (await fs.readdir(directory)).map(parseIdentity).filter((i) => i !== undefined);
    const metaGood = (bytes: Uint8Array, among: readonly ObjectIdentity[]) =>
      among.length === 0 ? metaChecks(bytes, undefined) : among.some((i) => metaChecks(bytes, i));
    if (meta !== undefined && !metaGood(meta, identities))
      await remove(
        META_NAME,
        "damaged metadata (or another object's): a pending point-in-time restore request, if any, is dropped",
      );
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
        if (damage.kind === "lostHead") {
          // The newest segment is gone: what is left opens, without the commits it held.
          for (const name of damage.markers)
            await remove(
              name,
              `the log's head marker: the segment it names, with the commits from seq ${damage.fromSeq} on, is missing`,
            );
          io.out(
            `the commits from seq ${damage.fromSeq} on are lost with the missing segment; the object opens with the log that is left`,
          );
          cut = true;
          continue;
        }
        if (damage.kind === "lostTail") {
          // The log ends before the newest snapshot: the object opens with that snapshot's state.
          // Recorded (durably) so that the open takes the shorter log as this repair's doing.
          const name = logCutName(damage.logEnd);
          await writeFile(file(name), new Uint8Array(0), { flag: "wx" });
          await syncPath(directory);
          io.out(
            `created ${name}: the log ends at seq ${damage.logEnd}, before the snapshot of seq ${damage.snapshotSeq}, which holds the state of the commits up to it; the commits after seq ${damage.snapshotSeq} that the missing log held are lost, and the object's history now starts at that snapshot: no state before seq ${damage.snapshotSeq} can be restored any more (a restore cannot cross the missing seqs ${damage.logEnd + 1} to ${damage.snapshotSeq - 1}; the older snapshots and log stay in the directory until a prune)`,
          );
          cut = true;
          continue;
        }
        if (damage.kind === "identities") {
          // Keep the identity the snapshot files are bound to; the others came from elsewhere.
          const { keep, bound } = await boundIdentity(directory, damage.names);
          if (keep === "tie") {
            io.out(
              `cannot repair: ${damage.names.join(", ")}: snapshot files of this directory are bound to more than one of them; move the files copied from another object's directory out, then repair again`,
            );
            return false;
          }
          for (const name of damage.names) {
            if (name === keep) continue;
            // The snapshot files bound to an identity that goes are another object's: they go too.
            for (const snapshot of bound.get(name) ?? [])
              await remove(snapshot, `a snapshot of another object: its checksum covers ${name}, not ${keep ?? ""}`);
            await remove(
              name,
              keep === undefined
                ? "an identity no snapshot file is bound to; the next open gives the directory one again"
                : `an identity copied from another object's directory: this directory's snapshot files are bound to ${keep}`,
            );
          }
          const kept = identities.filter((i) => i.name === keep);
          const metaNow = await readFile(file(META_NAME)).catch(() => undefined);
          if (metaNow !== undefined && !metaGood(metaNow, kept))
            await remove(META_NAME, "metadata of another object: its checksum covers an identity that was removed");
          continue;
        }
        if (damage.kind === "stranded") {
          // The log after these snapshots is gone: they can no longer start a replay. Moved out
          // (the copy keeps the state each holds); the object opens from the next snapshot.
          for (const name of damage.snapshots)
            await remove(
              name,
              `the log segments after it, commits ${damage.fromSeq + 1} to ${damage.toSeq}, are missing`,
            );
          io.out(
            `the states from seq ${damage.fromSeq} up to the next snapshot can no longer be restored; the copies keep the states the removed snapshots hold`,
          );
          cut = true;
          continue;
        }
        await cutLog(
          directory,
          { ...damage, offset: damage.kind === "segment" ? damage.offset : 0 },
          { backup, out: io.out, syncDirectory: () => syncPath(directory) },
          await bindingNow(directory),
        );
        // A head marker names the newest segment: one for a segment the cut removed goes too.
        const names = await fs.readdir(directory);
        const newestLeft = Math.max(0, ...names.map((n) => Number(SEGMENT_RE.exec(n)?.[1] ?? 0)));
        for (const name of names)
          if (Number(HEAD_RE.exec(name)?.[1] ?? 0) > newestLeft)
            await remove(name, "the log's head marker, for a segment this repair removed");
        cut = true;
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
        if (!cut) io.out("no commit was dropped");
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
 * fsyncs a file or a directory. Where a directory cannot be opened or synced (Windows), its entries
 * are as durable as the platform makes them.
 */
async function syncPath(path: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if (["EISDIR", "EPERM", "EACCES"].includes((error as { code?: string }).code ?? "")) return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (!["EINVAL", "EPERM", "EBADF"].includes((error as { code?: string }).code ?? "")) throw error;
  } finally {
    await handle.close();
  }
}

/**
 * Cuts the log where `damage` starts and removes the later segments whose commits can no longer
 * follow the cut: every one up to the first that starts right after a usable snapshot (the log may
 * start again there, as after a prune, so it and the segments after it are kept), or that holds the
 * commit right after one (its commits after the snapshot are kept as a segment starting there).
 * Says which commits the log no longer holds, and where a kept snapshot still holds their result.
 */
async function cutLog(
  directory: string,
  damage: { segment: string; offset: number; lastGoodSeq: number; snapshotSeqs: ReadonlySet<number> },
  io: { backup(name: string): Promise<void>; out(line: string): void; syncDirectory(): Promise<void> },
  binding: FrameBinding | undefined,
): Promise<void> {
  const fs = await import("node:fs/promises");
  const { segment, offset, lastGoodSeq, snapshotSeqs } = damage;
  const names = (await fs.readdir(directory)).filter((n) => SEGMENT_RE.test(n)).sort();
  const bytes = new Uint8Array(await fs.readFile(join(directory, segment)));
  await io.backup(segment);
  if (offset === 0) await fs.rm(join(directory, segment));
  else await fs.truncate(join(directory, segment), offset);
  io.out(
    offset === 0
      ? `removed ${segment} (damaged from its first byte, or after a gap in the log)`
      : `cut ${segment} at byte ${offset}, where the damage starts (${bytes.length - offset} bytes after it dropped)`,
  );
  let to: number | undefined;
  let restart: number | undefined;
  for (const name of names.filter((n) => n > segment)) {
    const firstSeq = Number(SEGMENT_RE.exec(name)?.[1]);
    if (snapshotSeqs.has(firstSeq - 1)) {
      restart = firstSeq - 1;
      io.out(
        `kept ${name} and the segments after it: the log starts again there, after the snapshot of seq ${restart}`,
      );
      break;
    }
    const held = new Uint8Array(await fs.readFile(join(directory, name)));
    const frames = scanFrames(held, binding);
    // A usable snapshot inside this segment: the log can start again right after it, so the
    // commits after the snapshot are kept in a segment of their own instead of dropped with it.
    const inside = frames.seqs.findIndex((seq) => snapshotSeqs.has(seq - 1));
    if (inside > 0) {
      restart = (frames.seqs[inside] as number) - 1;
      const tail = segmentName(restart + 1);
      // Durable before the original goes: a crash between leaves both, which the next repair
      // reads as a gap and settles the same way.
      const handle = await fs.open(join(directory, tail), "wx");
      try {
        await handle.writeFile(held.subarray(frames.offsets[inside] as number, frames.validBytes));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await io.syncDirectory();
      to = Math.max(to ?? restart, restart);
      await io.backup(name);
      await fs.rm(join(directory, name));
      io.out(
        `kept the commits after seq ${restart} of ${name} as ${tail} and the segments after it: the log starts again there, after the snapshot of seq ${restart}`,
      );
      break;
    }
    for (const seq of frames.seqs) to = Math.max(to ?? seq, seq);
    await io.backup(name);
    await fs.rm(join(directory, name));
    io.out(`removed ${basename(name)} (its commits come after the damage)`);
  }
  const from = lastGoodSeq + 1;
  if (restart !== undefined) {
    io.out(
      `dropped commits ${from} to ${restart} from the log: the snapshot of seq ${restart} still holds their result, but the object's history now starts at that snapshot: no state before seq ${restart} can be restored any more (a restore cannot cross the dropped commits)`,
    );
    return;
  }
  const newest = Math.max(0, ...snapshotSeqs);
  io.out(
    `dropped every commit after seq ${lastGoodSeq} from the log${to !== undefined ? ` (the removed segments held seqs up to ${to})` : ""}${newest > lastGoodSeq ? `; the snapshot of seq ${newest} still holds the result of every commit up to it` : ""}`,
  );
}

/** How the directory's frames are checked now (log-binding.ts): its identity and log binding markers. */
async function bindingNow(directory: string): Promise<FrameBinding | undefined> {
  const fs = await import("node:fs/promises");
  const names = await fs.readdir(directory);
  const identity = names.map(parseIdentity).find((i) => i !== undefined);
  const markers = names.map(logBoundSeq).filter((seq) => seq !== undefined);
  return frameBinding(identity?.id, markers);
}

/**
 * Which of the identity files `names` the directory's files are bound to (snapshot name CRCs and
 * log frames' CRCs cover it; a segment counts by its first frame): `keep` is the one most are bound
 * to, `undefined` when none is, `"tie"` when two have as many; `bound` lists the snapshot files
 * bound to each (a segment bound to one that goes is damage to the next pass, which cuts it).
 */
async function boundIdentity(
  directory: string,
  names: readonly string[],
): Promise<{ keep: string | undefined | "tie"; bound: Map<string, string[]> }> {
  const fs = await import("node:fs/promises");
  const bound = new Map<string, string[]>(names.map((n) => [n, []]));
  const segments = new Map<string, number>(names.map((n) => [n, 0]));
  for (const file of await fs.readdir(directory)) {
    if (SEGMENT_RE.test(file)) {
      const held = await fs.readFile(join(directory, file)).catch(() => undefined);
      for (const name of names) {
        const identity = parseIdentity(name);
        const binding = identity && { seed: logBindingSeed(identity.id), unboundUpTo: 0 };
        if (held !== undefined && binding !== undefined && scanFrames(held, binding).seqs.length > 0)
          segments.set(name, (segments.get(name) ?? 0) + 1);
      }
      continue;
    }
    const m = SNAPSHOT_RE.exec(file) ?? DELTA_RE.exec(file);
    if (m === null) continue;
    const bytes = await fs.readFile(join(directory, file)).catch(() => undefined);
    if (bytes === undefined) continue;
    const fileCrc = crc32(bytes);
    const [seq, timeMs, crc] = [Number(m[1]), Number(m[2]), Number.parseInt(m[3] ?? "", 16)];
    for (const name of names) {
      const identity = parseIdentity(name);
      if (identity !== undefined && nameCrcOf(fileCrc, seq, timeMs, identity.id) === crc) bound.get(name)?.push(file);
    }
  }
  const count = (n: string) => (bound.get(n)?.length ?? 0) + (segments.get(n) ?? 0);
  const most = Math.max(...names.map(count));
  const top = names.filter((n) => count(n) === most);
  return { keep: most === 0 ? undefined : top.length === 1 ? top[0] : "tie", bound };
}
