/**
 * The inspector reads a bucket prefix as it reads a directory, without fencing the live holder.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInspect } from "../../src/cli/inspect-commands";
import { s3Persistence } from "../../src/s3/index";
import { ObjectStorage } from "../../src/storage/object-storage";
import { FakeS3 } from "./fake-s3";
import { freshPrefix, optionsFor, type S3Target } from "./s3-harness";

let s3: FakeS3;
let target: S3Target;
const saved = { ...process.env };

beforeAll(async () => {
  s3 = await FakeS3.start({ accessKeyId: "AKINSPECT" });
  target = { endpoint: s3.endpoint, bucket: "objects", accessKeyId: "AKINSPECT", secretAccessKey: "inspect-secret" };
  process.env.ACTORSTORE_S3_ENDPOINT = s3.endpoint;
  process.env.AWS_ACCESS_KEY_ID = "AKINSPECT";
  process.env.AWS_SECRET_ACCESS_KEY = "inspect-secret";
});
afterAll(async () => {
  for (const k of ["ACTORSTORE_S3_ENDPOINT", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  await s3.close();
});

async function inspectCli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runInspect(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe("actorstore-inspect s3://bucket/prefix", () => {
  it("keys, sql and bookmarks read the bucket; the live holder keeps writing (nothing was claimed)", async () => {
    const prefix = freshPrefix("inspect");
    const persistence = s3Persistence(optionsFor(target, prefix));
    const storage = await ObjectStorage.open({ persistence });
    await storage.put({ "user:1": "Ada", "user:2": "Lin" });
    storage.sql.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)");
    storage.sql.exec("INSERT INTO orders (total) VALUES (9.5)");
    await storage.sync();
    const claimsBefore = s3.keys("objects", `${prefix}claim/`);

    const keys = await inspectCli(`s3://objects/${prefix}`, "keys");
    expect(keys.err).toEqual(["(2 keys)"]);
    expect(keys.code).toBe(0);
    expect(keys.out.join("\n")).toContain("user:1");
    expect(keys.out.join("\n")).toContain("user:2");
    const sql = await inspectCli(`s3://objects/${prefix}`, "sql", "SELECT total FROM orders");
    expect(sql.code).toBe(0);
    expect(sql.out.join("\n")).toContain("9.5");
    const bookmarks = await inspectCli(`s3://objects/${prefix}`, "bookmarks");
    expect(bookmarks.code).toBe(0);

    expect(s3.keys("objects", `${prefix}claim/`)).toEqual(claimsBefore);
    await storage.put("user:3", "Mo");
    await storage.sync();
    await storage.close();
  });

  it("a prefix that holds no object (a typo, a missing trailing slash) is refused, read or restore, and nothing is written there", async () => {
    const prefix = freshPrefix("inspect-typo");
    const storage = await ObjectStorage.open({ persistence: s3Persistence(optionsFor(target, prefix)) });
    await storage.put("k", "v");
    await storage.sync();
    const bookmark = await storage.getCurrentBookmark();
    await storage.close();
    const wrong = prefix.slice(0, -1);
    const before = s3.keys("objects", wrong);
    for (const argv of [["keys"], ["restore", bookmark]]) {
      const run = await inspectCli(`s3://objects/${wrong}`, ...argv);
      expect(run.code).toBe(1);
      expect(run.err.join("\n")).toContain(`s3://objects/${wrong} holds no actorstore object`);
      expect(run.err.join("\n")).not.toContain("inspect-secret");
    }
    expect(s3.keys("objects", wrong)).toEqual(before);
    const right = await inspectCli(`s3://objects/${prefix}`, "keys");
    expect(right.code).toBe(0);
    expect(right.err).toEqual(["(1 key)"]);
  });

  it("without endpoint and credentials in the environment it says what to set", async () => {
    const endpoint = process.env.ACTORSTORE_S3_ENDPOINT;
    delete process.env.ACTORSTORE_S3_ENDPOINT;
    try {
      const run = await inspectCli("s3://objects/x/", "keys");
      expect(run.code).toBe(1);
      expect(run.err.join("\n")).toMatch(/ACTORSTORE_S3_ENDPOINT/);
    } finally {
      process.env.ACTORSTORE_S3_ENDPOINT = endpoint;
    }
  });
});
