/**
 * Every public options object refuses what it does not understand (issue: options that say when
 * they are wrong): ObjectStorage.open, ObjectContext.create, the test kit.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ObjectContext } from "../../src/context/object-context";
import { ActorStoreError } from "../../src/errors";
import { ObjectStorage } from "../../src/storage/object-storage";
import { createTestObject } from "../../src/testkit/test-object";

class Empty {}

async function typeErrorOf(p: Promise<unknown>): Promise<TypeError & { code?: string }> {
  const e = await p.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
  expect(e).toBeInstanceOf(TypeError);
  expect((e as { code?: string }).code).toBe("ERR_INVALID_OPTION");
  return e as TypeError;
}

const open = (options: unknown) => ObjectStorage.open(options as never);

describe("ObjectStorage.open: options", () => {
  it("open({ dir }): unknown name, valid ones listed", async () => {
    const e = await typeErrorOf(open({ dir: "./data" }));
    expect(e.message).toMatch(
      /^ObjectStorage\.open\(\): unknown option "dir"\. Valid options: backend, persistence, directory, clock, limits, codec,/,
    );
  });

  it("open({ directoy }): did you mean directory", async () => {
    const e = await typeErrorOf(open({ directoy: "./data" }));
    expect(e.message).toContain('unknown option "directoy" (did you mean "directory"?)');
  });

  it('open("./data/x"): says to pass { directory }', async () => {
    const e = await typeErrorOf(open("./data/x"));
    expect(e.message).toBe(
      'ObjectStorage.open(): options must be an object, not a string; to keep the data in a directory, pass { directory: "./data/x" }. Valid options: backend, persistence, directory, clock, limits, codec, cacheSoftLimitBytes, deleteAllDeletesAlarm, retentionMs, snapshotEveryRecords, snapshotLogCapBytes, sqlJs, maxDatabaseSize, engineFactory.',
    );
  });

  it("limits: { keySize: 1 }: unknown limit, the valid limits listed", async () => {
    const e = await typeErrorOf(open({ limits: { keySize: 1 } }));
    expect(e.message).toBe(
      'ObjectStorage.open(): unknown option "limits.keySize". Valid options of "limits": maxKeyBytes, maxValueBytes, maxKeysPerCall.',
    );
  });

  it('codec: "json": the valid codecs', async () => {
    const e = await typeErrorOf(open({ codec: "json" }));
    expect(e.message).toBe('ObjectStorage.open(): option "codec" must be "structured" or "v8"; got "json".');
  });

  it("wrong types and bad values of every option are refused", async () => {
    const bad: Array<Record<string, unknown>> = [
      { backend: "sqlite3" },
      { backend: 1 },
      { persistence: {} },
      { persistence: "memory" },
      { directory: "" },
      { directory: 7 },
      { clock: Date },
      { limits: "big" },
      { limits: { maxValueBytes: -1 } },
      { cacheSoftLimitBytes: "4MiB" },
      { deleteAllDeletesAlarm: "yes" },
      { retentionMs: 0 },
      { retentionMs: Number.POSITIVE_INFINITY },
      { snapshotEveryRecords: 0.5 },
      { snapshotLogCapBytes: 0 },
      { snapshotLogCapBytes: 1.5 },
      { snapshotLogCapBytes: "16MiB" },
      { snapshotLogCapBytes: Number.POSITIVE_INFINITY },
      { sqlJs: { locateFile: "x.wasm" } },
      { sqlJs: { wasm: new Uint8Array() } },
      { engineFactory: () => {} },
    ];
    for (const options of bad) {
      const e = await typeErrorOf(open(options));
      const name = Object.keys(options)[0] as string;
      expect(e.message, JSON.stringify(options)).toContain(`"${name}`);
    }
    expect((await typeErrorOf(open({ backend: "sqllite" }))).message).toContain('(did you mean "sqlite"?)');
  });

  it("snapshotLogCapBytes: a positive whole number of bytes", async () => {
    const e = await typeErrorOf(open({ snapshotLogCapBytes: 0 }));
    expect(e.message).toBe('ObjectStorage.open(): option "snapshotLogCapBytes" must be an integer ≥ 1 (bytes); got 0.');
  });

  it("persistence and directory together are refused", async () => {
    const { createMemoryPersistence } = await import("../../src/durability/memory-persistence");
    const e = await typeErrorOf(open({ persistence: createMemoryPersistence(), directory: "./x" }));
    expect(e.message).toContain('pass either "persistence" or "directory", not both');
  });

  it("valid options still open", async () => {
    const storage = await ObjectStorage.open({
      backend: "kv",
      limits: { maxKeyBytes: 10 },
      codec: "structured",
      cacheSoftLimitBytes: 0,
      deleteAllDeletesAlarm: true,
      retentionMs: 1000,
      snapshotEveryRecords: 5,
      snapshotLogCapBytes: 1,
    });
    await storage.put("k", 1);
    expect(await storage.get("k")).toBe(1);
    await storage.close();
  });
});

describe("ObjectStorage.open: a directory that cannot hold the data", () => {
  const root = mkdtempSync(join(tmpdir(), "actorstore-dir-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  async function dirErrorOf(directory: string): Promise<ActorStoreError> {
    const e = await ObjectStorage.open({ directory }).then(
      () => {
        throw new Error("expected a rejection");
      },
      (error: unknown) => error,
    );
    expect(e).toBeInstanceOf(ActorStoreError);
    expect((e as ActorStoreError).code).toBe("ERR_DIRECTORY");
    return e as ActorStoreError;
  }

  it("a file where the directory should be: names it and what to do", async () => {
    const file = join(root, "a-file");
    writeFileSync(file, "not a directory");
    const e = await dirErrorOf(file);
    expect(e.message).toBe(
      `The storage directory ${JSON.stringify(file)} cannot be used: ${JSON.stringify(file)} is a file, not a directory. Choose another directory, or move the file away. (EEXIST on mkdir)`,
    );
    expect((e.cause as { code?: string }).code).toBe("EEXIST");
  });

  it("a file on the way to the directory", async () => {
    const file = join(root, "b-file");
    writeFileSync(file, "x");
    for (const directory of [join(file, "sub"), join(file, "sub", "deeper")]) {
      const e = await dirErrorOf(directory);
      // It names the file in the way, not the whole path.
      expect(e.message).toBe(
        `The storage directory ${JSON.stringify(directory)} cannot be used: a part of its path (${JSON.stringify(file)}) is a file, not a directory. Choose another directory, or move the file away. (ENOTDIR on mkdir)`,
      );
    }
  });

  it("ObjectContext.create({ storage: { directory } }) explains it the same way", async () => {
    const file = join(root, "c-file");
    writeFileSync(file, "x");
    const e = await ObjectContext.create(Empty, { storage: { directory: file } }).then(
      () => {
        throw new Error("expected a rejection");
      },
      (error: unknown) => error,
    );
    expect(e).toBeInstanceOf(ActorStoreError);
    expect((e as ActorStoreError).code).toBe("ERR_DIRECTORY");
    expect((e as Error).message).toContain(`${JSON.stringify(file)} is a file, not a directory`);
  });

  it.skipIf(!existsSync("/sys/kernel"))("a directory the process may not write (sysfs refuses even root)", async () => {
    const e = await dirErrorOf("/sys/kernel/actorstore-test");
    expect(e.message).toMatch(
      /^The storage directory "\/sys\/kernel\/actorstore-test" is not writable by this process/,
    );
    expect(e.message).toContain("Give the process write permission there, or choose another directory.");
  });
});

describe("ObjectContext.create and createTestObject: options", () => {
  it("ObjectContext.create refuses unknown and wrong options, nested storage options too", async () => {
    let e = await typeErrorOf(ObjectContext.create(Empty, { blockConcurrencyTimeout: 5 } as never));
    expect(e.message).toContain(
      'ObjectContext.create(): unknown option "blockConcurrencyTimeout" (did you mean "blockConcurrencyTimeoutMs"?)',
    );
    e = await typeErrorOf(ObjectContext.create(Empty, { storage: { directoy: "x" } } as never));
    expect(e.message).toContain(
      'ObjectContext.create(): unknown option "storage.directoy" (did you mean "storage.directory"?)',
    );
    e = await typeErrorOf(ObjectContext.create(Empty, { storage: "./data" } as never));
    expect(e.message).toContain('pass { directory: "./data" }');
    e = await typeErrorOf(ObjectContext.create(Empty, { id: 5 } as never));
    expect(e.message).toBe('ObjectContext.create(): option "id" must be an ObjectId or a name (string); got 5.');
    e = await typeErrorOf(ObjectContext.create(Empty, { alarms: "off" } as never));
    expect(e.message).toContain('option "alarms" must be true or false');
    await expect(ObjectContext.create({} as never)).rejects.toThrow(TypeError);
  });

  it("createTestObject refuses unknown and wrong options; storage may not carry persistence", async () => {
    let e = await typeErrorOf(createTestObject(Empty, { clock: { now: () => 0 } } as never));
    expect(e.message).toBe(
      'createTestObject(): option "clock" must be a FakeClock (from actorstore/testkit); got an object.',
    );
    e = await typeErrorOf(createTestObject(Empty, { storage: { persistence: {} } } as never));
    expect(e.message).toMatch(
      /^createTestObject\(\): unknown option "storage\.persistence"\. Valid options of "storage": backend, limits,/,
    );
    e = await typeErrorOf(createTestObject(Empty, { evn: {} } as never));
    expect(e.message).toContain('(did you mean "env"?)');
    const object = await createTestObject(Empty);
    await expect(object.restart({ graceful: 1 } as never)).rejects.toThrow(
      'restart(): option "graceful" must be true or false; got 1.',
    );
    await object.close();
  });
});
