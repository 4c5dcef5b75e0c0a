/**
 * The stores a cluster host checks before each event (one per object it holds over a bucket): an
 * object that is evicted is forgotten, so that a long-running host does not keep every adapter it
 * ever opened, with what each one loaded.
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { bucketPerObject, ClusterBucket, type HeldStore, recordingHolders } from "../../src/cluster/bucket";
import { DurableObject } from "../../src/context/durable-object";
import { ObjectHost } from "../../src/host/object-host";
import { FakeClock } from "../../src/util/clock";
import { FakeS3 } from "../s3/fake-s3";

class Counter extends DurableObject {
  async increment(): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    return n;
  }
}

let s3: FakeS3;
beforeEach(async () => {
  s3 = await FakeS3.start();
});
afterEach(async () => {
  await s3.close();
});

describe("held stores over a bucket", () => {
  test("an evicted object's store is forgotten; a started one is checked again", async () => {
    const options = {
      endpoint: s3.endpoint,
      bucket: "objects",
      prefix: "held/",
      credentials: { accessKeyId: "AKFAKE", secretAccessKey: "not-a-real-secret" },
    };
    const held = new Map<string, HeldStore>();
    const host = new ObjectHost({
      namespaces: { COUNTER: Counter },
      clock: new FakeClock(),
      idleTimeoutMs: Number.POSITIVE_INFINITY,
      persistence: recordingHolders(bucketPerObject(options), new ClusterBucket(options), "host-a", held),
    });
    try {
      for (const name of ["a", "b", "c"]) expect(await host.env.COUNTER.getByName(name).increment()).toBe(1);
      expect(held.size).toBe(3);
      await held.get(`COUNTER/${host.env.COUNTER.idFromName("a").toString()}`)?.verifyHolder();

      expect(await host.evictIdle()).toBe(3);
      expect(held.size).toBe(0);

      // Started again: held (and checked) again, with its data.
      expect(await host.env.COUNTER.getByName("b").increment()).toBe(2);
      expect([...held.keys()]).toEqual([`COUNTER/${host.env.COUNTER.idFromName("b").toString()}`]);
    } finally {
      await host.close();
    }
    expect(held.size).toBe(0);
  });
});
