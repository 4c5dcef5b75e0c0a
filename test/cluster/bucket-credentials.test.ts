/**
 * A cluster's bucket with a credentials provider (the S3 adapter's `credentials`, fixed or a
 * function): one cache for the cluster's records and every object's persistence, fetched again
 * when the store answers that the token expired (rotation mid-run), never a credential in an error.
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ClusterBucket, type ClusterBucketOptions } from "../../src/cluster/bucket";
import { ClusterHost } from "../../src/cluster/cluster-host";
import { DurableObject } from "../../src/context/durable-object";
import { ActorStoreError } from "../../src/errors";
import type { S3Credentials } from "../../src/s3/options";
import { FakeClock } from "../../src/util/clock";
import { FakeS3 } from "../s3/fake-s3";

class Counter extends DurableObject {
  async increment(): Promise<number> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    return n;
  }
}

const SECRET = "secret-that-must-never-show-0123456789";
let s3: FakeS3;
beforeEach(async () => {
  s3 = await FakeS3.start();
});
afterEach(async () => {
  await s3.close();
});

/** A provider that hands out session `token-<n>`, counting its calls. */
function rotating() {
  const state = { calls: 0, token: "token-1" };
  const provider = async (): Promise<S3Credentials> => {
    state.calls++;
    return { accessKeyId: "AKFAKE", secretAccessKey: SECRET, sessionToken: state.token };
  };
  return { state, provider };
}

/** One host of Counter objects over the fake S3's bucket "objects", with these bucket options. */
function startHost(bucket: Omit<ClusterBucketOptions, "endpoint" | "bucket">) {
  return ClusterHost.start({
    namespaces: { COUNTER: Counter },
    clock: new FakeClock(),
    idleTimeoutMs: Number.POSITIVE_INFINITY,
    cluster: { id: "host-a", bucket: { endpoint: s3.endpoint, bucket: "objects", ...bucket } },
  });
}

describe("a cluster's bucket with a credentials provider", () => {
  test("one provider call serves the records and every object; an expired token mid-run is fetched again once, for all of them", async () => {
    const { state, provider } = rotating();
    const node = await startHost({ prefix: "creds/", credentials: provider });
    try {
      const names = Array.from({ length: 5 }, (_, i) => `c-${i}`);
      for (const n of names) expect(await node.env.COUNTER.getByName(n).increment()).toBe(1);
      expect(state.calls).toBe(1);
      const tokens = () => new Set(s3.log.map((r) => r.headers["x-amz-security-token"]));
      expect(tokens()).toEqual(new Set(["token-1"]));

      // The token is rotated: the store refuses the old one (400 ExpiredToken). The records and the
      // objects' writes each get the new one from one more call of the provider.
      s3.expiredTokens.add("token-1");
      state.token = "token-2";
      const mark = s3.log.length;
      await node.membership.beat();
      for (const n of names) expect(await node.env.COUNTER.getByName(n).increment()).toBe(2);
      for (const n of ["c-new-1", "c-new-2"]) expect(await node.env.COUNTER.getByName(n).increment()).toBe(1);
      expect(state.calls).toBe(2);
      const after = s3.log.slice(mark);
      expect(
        after.some((r) => r.key.startsWith("creds/members/") && r.headers["x-amz-security-token"] === "token-2"),
      ).toBe(true);
      expect(
        after.some((r) => r.key.startsWith("creds/objects/") && r.headers["x-amz-security-token"] === "token-2"),
      ).toBe(true);
    } finally {
      await node.close();
    }
  });

  test("the cluster's records: a refused token is fetched again once and the request sent again; refused again, the error names the code, never a credential", async () => {
    const { state, provider } = rotating();
    const bucket = new ClusterBucket({ endpoint: s3.endpoint, bucket: "objects", prefix: "r/", credentials: provider });
    await bucket.put("k.json", "{}");
    expect(state.calls).toBe(1);

    s3.expiredTokens.add("token-1");
    state.token = "token-2";
    expect(await bucket.get("k.json")).toBe("{}");
    expect(state.calls).toBe(2);
    // Concurrent requests refused together share one call.
    s3.expiredTokens.add("token-2");
    state.token = "token-3";
    await Promise.all(Array.from({ length: 6 }, (_, i) => bucket.put(`p-${i}.json`, "{}")));
    expect(state.calls).toBe(3);

    // A provider that keeps answering an expired token: one more call, then the error.
    s3.expiredTokens.add("token-3");
    const error = await bucket.list("").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(state.calls).toBe(4);
    expect(error).toBeInstanceOf(ActorStoreError);
    expect((error as ActorStoreError).code).toBe("ERR_UNAVAILABLE");
    expect((error as Error).message).toMatch(
      /HTTP 400 ExpiredToken\. The store refused the credentials \(ExpiredToken\) also after the credentials provider/,
    );
    expect((error as Error).message).not.toMatch(/token-|secret-that|AKFAKE/);
  });

  test("fixed credentials are never fetched again: an expired token fails with a hint to pass a provider", async () => {
    const bucket = new ClusterBucket({
      endpoint: s3.endpoint,
      bucket: "objects",
      prefix: "f/",
      credentials: { accessKeyId: "AKFAKE", secretAccessKey: SECRET, sessionToken: "fixed-token" },
    });
    await bucket.put("k.json", "{}");
    s3.expiredTokens.add("fixed-token");
    const error = (await bucket.get("k.json").catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/fixed credentials are never fetched again/);
    expect(error.message).not.toMatch(/fixed-token|secret-that/);
  });

  test("a provider that resolves with something that is not credentials fails naming cluster.bucket, showing no value", async () => {
    const bucket = new ClusterBucket({
      endpoint: s3.endpoint,
      bucket: "objects",
      prefix: "bad/",
      credentials: async () => ({ accessKeyId: "AK FAKE", secretAccessKey: SECRET }),
    });
    const error = (await bucket.put("k.json", "{}").catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/^cluster\.bucket: /);
    expect(error.message).not.toMatch(/secret-that|AK FAKE/);
  });

  test("a provider that rejects while the cluster signs one of its own records: ERR_UNAVAILABLE naming cluster.bucket.credentials, nothing sent, no credential shown", async () => {
    // Regression: it read as ERR_WRITE_FAILED naming option "credentials" (the S3 adapter's), for a
    // heartbeat or a listing of the members.
    let fail = false;
    const bucket = new ClusterBucket({
      endpoint: s3.endpoint,
      bucket: "objects",
      prefix: "rej/",
      credentials: async () => {
        if (fail) throw new Error(`STS unreachable with ${SECRET}`);
        return { accessKeyId: "AKFAKE", secretAccessKey: SECRET, sessionToken: "t-1" };
      },
    });
    await bucket.put("k.json", "{}");
    s3.expiredTokens.add("t-1");
    fail = true;
    const sent = s3.log.length;
    const error = (await bucket.put("members/h.json", "{}").catch((e: unknown) => e)) as ActorStoreError;
    expect(error).toBeInstanceOf(ActorStoreError);
    expect(error.code).toBe("ERR_UNAVAILABLE");
    expect(error.message).toMatch(
      /^Signing a request to .*\/objects\/rej\/ failed: the credentials provider \(option "cluster\.bucket\.credentials"\) threw Error: STS unreachable/,
    );
    expect(error.message).not.toMatch(/secret-that|AKFAKE|t-1/);
    // The refused request was the only one: the one to sign again was never sent.
    expect(s3.log.length - sent).toBe(1);
  });

  test("a provider that rejects while an object's request is signed: one message naming cluster.bucket.credentials, not the cluster's error quoted inside the adapter's, no credential shown", async () => {
    // Regression: the object's adapter called the cluster's cache as its provider and quoted the
    // cluster's whole failure as what "its" provider (option "credentials") threw: two "Signing a
    // request … failed" messages in one, the inner one cut by the redaction of token-like runs.
    let fail = false;
    const node = await startHost({
      prefix: "objrej/",
      credentials: async () => {
        if (fail) throw new Error(`STS unreachable with ${SECRET}`);
        return { accessKeyId: "AKFAKE", secretAccessKey: SECRET, sessionToken: "t-1" };
      },
    });
    try {
      expect(await node.env.COUNTER.getByName("live").increment()).toBe(1);
      s3.expiredTokens.add("t-1");
      fail = true;
      // A live object's write (the store refuses its token, the provider is asked again) and a new
      // object's start (its load asks the cache, which asks the provider) fail the same way.
      for (const name of ["live", "new"]) {
        const id = node.env.COUNTER.idFromName(name).toString();
        const error = (await node.env.COUNTER.getByName(name)
          .increment()
          .catch((e: unknown) => e)) as ActorStoreError;
        expect(error).toBeInstanceOf(ActorStoreError);
        expect(error.code).toBe("ERR_WRITE_FAILED");
        expect(error.message).toMatch(
          new RegExp(
            `^Signing a request to .*/objects/objrej/objects/COUNTER/${id}/ failed: the credentials provider \\(option "cluster\\.bucket\\.credentials"\\) threw Error: STS unreachable with \\[redacted\\]\\. Check that it resolves`,
          ),
        );
        expect(error.message.match(/Signing a request/g)).toHaveLength(1);
        expect(error.message.match(/Check that it resolves/g)).toHaveLength(1);
        expect(error.message).not.toMatch(/option "credentials"|ActorStoreError|secret-that|AKFAKE|t-1/);
      }
    } finally {
      fail = false;
      await node.close();
    }
  });

  test("an object's request refused again after the provider was called again names cluster.bucket.credentials", async () => {
    // The object's adapter named its own option "credentials", which a cluster's user never set.
    const { state, provider } = rotating();
    const node = await startHost({ prefix: "objstale/", credentials: provider });
    try {
      expect(await node.env.COUNTER.getByName("live").increment()).toBe(1);
      // The provider keeps answering the token the store now refuses; a new object's start (its
      // load's first request is a PUT, whose answer carries the store's code) fails.
      s3.expiredTokens.add("token-1");
      const error = (await node.env.COUNTER.getByName("new")
        .increment()
        .catch((e: unknown) => e)) as ActorStoreError;
      expect(state.calls).toBe(2);
      expect(error).toBeInstanceOf(ActorStoreError);
      expect(error.code).toBe("ERR_WRITE_FAILED");
      expect(error.message).toMatch(
        /HTTP 400 ExpiredToken\. The store refused the credentials \(ExpiredToken\) also after the credentials provider \(option "cluster\.bucket\.credentials"\) was called again/,
      );
      expect(error.message).not.toMatch(/option "credentials"|token-|secret-that|AKFAKE/);
    } finally {
      await node.close();
    }
  });

  test("a provider that hangs while an object's request is signed: one message naming cluster.bucket.credentials and the bucket's requestTimeoutMs", async () => {
    // The bucket's cache times the user's provider (cluster.bucket.requestTimeoutMs); the object's
    // adapter reports that, once, instead of quoting it (or timing the cache with its own default).
    let hang = false;
    const node = await startHost({
      prefix: "objhang/",
      requestTimeoutMs: 100,
      credentials: async () => {
        if (hang) return new Promise<S3Credentials>(() => {});
        return { accessKeyId: "AKFAKE", secretAccessKey: SECRET, sessionToken: "h-1" };
      },
    });
    try {
      expect(await node.env.COUNTER.getByName("live").increment()).toBe(1);
      s3.expiredTokens.add("h-1");
      hang = true;
      const error = (await node.env.COUNTER.getByName("live")
        .increment()
        .catch((e: unknown) => e)) as ActorStoreError;
      expect(error).toBeInstanceOf(ActorStoreError);
      expect(error.code).toBe("ERR_WRITE_FAILED");
      expect(error.message).toMatch(
        /^Signing a request to .*\/objects\/objhang\/objects\/COUNTER\/[0-9a-f]{64}\/ failed: the credentials provider \(option "cluster\.bucket\.credentials"\) did not resolve within 100 ms \(requestTimeoutMs\)\. Check that it resolves/,
      );
      expect(error.message.match(/Signing a request/g)).toHaveLength(1);
      expect(error.message).not.toMatch(/option "credentials"|ActorStoreError|secret-that|AKFAKE|h-1/);
    } finally {
      hang = false;
      await node.close();
    }
  });
});
