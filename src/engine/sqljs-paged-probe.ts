/**
 * Checks that a database opened on a {@link PagedFile} keeps its file there (once per loaded
 * module), and whether a connection's writes still reach its paged file (MEMFS may take the file
 * back). Kept apart from the paged file itself: these run SQL, the paged file never does.
 *
 * @packageDocumentation
 */
import { openOnPagedFile, PagedFile } from "./sqljs-paged-file";

/** A sql.js `Database` as far as the probe uses it. */
export interface ProbeDatabase {
  exec(sql: string): { values: unknown[][] }[];
  export(): Uint8Array;
  close(): void;
}

/**
 * Checks once, for a loaded module, that a database opened on a paged file keeps its file there,
 * and returns the image new databases are opened from; `undefined` when anything does not hold
 * (then every database uses MEMFS's own storage). `openPlain(bytes?)` opens a database as the
 * engine does without a paged file.
 *
 * The image is the file of a new database as the engine opens it, read back with `export()`,
 * whose backup sets the copy's schema cookie one past its own: the cookie is set back, so that
 * `PRAGMA schema_version` and everything else SQL can see of the header answers as for a new
 * database (checked). Then a database is opened from it on a paged file with chunks smaller than
 * its pages and grown over many of them: every write must reach the paged file, its bytes must
 * open as the same database, and a header write must show in its first chunk.
 */
export function probePagedFiles(openPlain: (bytes?: Uint8Array) => ProbeDatabase): Uint8Array | undefined {
  const HEADER = [
    "schema_version",
    "user_version",
    "application_id",
    "page_count",
    "page_size",
    "freelist_count",
    "auto_vacuum",
    "encoding",
    "data_version",
    "journal_mode",
  ];
  const header = (db: ProbeDatabase) => HEADER.map((p) => db.exec(`PRAGMA ${p}`)[0]?.values[0]?.[0]);
  const fresh = openPlain();
  let image: Uint8Array;
  let expected: unknown[];
  try {
    expected = header(fresh);
    image = fresh.export().slice();
  } finally {
    fresh.close();
  }
  if (image.length < 100) return undefined;
  new DataView(image.buffer, image.byteOffset, image.byteLength).setUint32(40, Number(expected[0]));
  const file = new PagedFile(64 * 1024 * 1024, 1536);
  const { opened: db, paged } = openOnPagedFile(image, file, openPlain);
  try {
    if (!paged || JSON.stringify(header(db)) !== JSON.stringify(expected)) return undefined;
    const script =
      "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 60) INSERT INTO t SELECT i, randomblob(900 + i) FROM c; UPDATE t SET v = zeroblob(10) WHERE k % 3 = 0";
    const writes = file.writes;
    db.exec(script);
    const pages = Number(db.exec("PRAGMA page_count")[0]?.values[0]?.[0]);
    const pageSize = Number(db.exec("PRAGMA page_size")[0]?.values[0]?.[0]);
    if (file.writes === writes || file.size !== pages * pageSize || file.allocatedChunks < 40) return undefined;
    const summary = "SELECT count(*), sum(length(v)), hex(sum(k * unicode(hex(v)))) FROM t";
    const copy = openPlain(file.slice(0, file.size));
    try {
      const same = JSON.stringify(copy.exec(summary)) === JSON.stringify(db.exec(summary));
      if (!same || copy.exec("PRAGMA integrity_check")[0]?.values[0]?.[0] !== "ok") return undefined;
    } finally {
      copy.close();
    }
    db.exec("PRAGMA user_version = 4660");
    const first = file.subarray(60, 64);
    if (first[0] !== 0 || first[1] !== 0 || first[2] !== 0x12 || first[3] !== 0x34) return undefined;
  } finally {
    db.close();
  }
  return image;
}

/**
 * Whether writes of `db` still reach `file`: rewrites the user-version header field with its own
 * value (nothing SQL can read changes; SQLite writes page 1) and looks for the write in `file`.
 * Call it only between transactions.
 */
export function writesReach(db: ProbeDatabase, file: PagedFile): boolean {
  const version = Number(db.exec("PRAGMA user_version")[0]?.values[0]?.[0]);
  const writes = file.writes;
  db.exec(`PRAGMA user_version = ${version}`);
  if (file.writes === writes) return false;
  const field = file.subarray(60, 64);
  return new DataView(field.buffer, field.byteOffset, 4).getInt32(0) === version;
}
