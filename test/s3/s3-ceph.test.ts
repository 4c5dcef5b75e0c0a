/**
 * The S3 adapter against a real Ceph RADOS Gateway on loopback (started by the test setup): the
 * same suite as the fake, then process-level faults: kill -9 of a holder then takeover, SIGSTOP of
 * a holder while another takes over then SIGCONT, kill -9 of the gateway mid-stream and restart.
 * After each: claims contiguous, log epochs never decrease, no gaps, every confirmed commit present,
 * nothing confirmed after a newer claim.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { AwsClient } from "aws4fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isFencedError, loadWithRecords } from "../../src/durability/persistence";
import { s3Persistence } from "../../src/s3/index";
import { kvRecord } from "../durability/adapter-contract";
import { type CephServer, ceph, cephScript, radosgwAdmin } from "./ceph";
import { checkInvariants } from "./invariants";
import { freshPrefix, optionsFor } from "./s3-harness";
import { describeS3Suite, rejection } from "./s3-suite";

let server: CephServer;
beforeAll(async () => {
  server = await ceph();
}, 600_000);

describeS3Suite("s3 (Ceph)", () => server);

describe("s3 (Ceph): permissions", () => {
  it("credentials that may read and write keys but not list the bucket: the open fails naming s3:ListBucket (the store answers 403 for a missing key), and works once it is granted", async () => {
    // The gateway the tests start has a second user, "limited", for bucket policies.
    if (server.cephDir === undefined) return;
    const owner = new AwsClient({ ...server, service: "s3", region: "us-east-1", retries: 0 });
    const bucket = `limited-${process.pid}-${Date.now().toString(36)}`;
    const base = `${server.endpoint}/${bucket}`;
    expect((await owner.fetch(base, { method: "PUT" })).status).toBe(200);
    const grant = async (actions: string[], resource: string[]) => {
      const statement = {
        Effect: "Allow",
        Principal: { AWS: ["arn:aws:iam:::user/limited"] },
        Action: actions,
        Resource: resource,
      };
      const body = JSON.stringify({ Version: "2012-10-17", Statement: [statement] });
      expect((await owner.fetch(`${base}?policy`, { method: "PUT", body })).status).toBe(204);
    };
    const objects = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"];
    await grant(objects, [`arn:aws:s3:::${bucket}/*`]);
    const limited = { ...server, bucket, accessKeyId: "AKLIMITED", secretAccessKey: "SKLIMITED" };
    const prefix = freshPrefix("limited");
    const denied = await rejection(s3Persistence(optionsFor(limited, prefix)).load());
    expect(denied).toMatchObject({ code: "ERR_WRITE_FAILED" });
    expect((denied as Error).message).toMatch(/HTTP 403\. .*grant s3:ListBucket on the bucket/);
    expect((denied as Error).message).not.toContain("SKLIMITED");
    // What the message says is enough: with s3:ListBucket too, the object opens and commits.
    await grant([...objects, "s3:ListBucket"], [`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`]);
    const adapter = s3Persistence(optionsFor(limited, prefix));
    expect((await adapter.load()).lastSeq).toBe(0);
    await adapter.append([kvRecord(1)]);
    expect((await loadWithRecords(s3Persistence(optionsFor(limited, prefix)))).records.map((r) => r.seq)).toEqual([1]);
  });
});

describe("s3 (Ceph): a bucket with versioning", () => {
  it("is refused at the first open (the gateway ignores If-None-Match there), with a message that says so, before anything is claimed; suspended, it works", async () => {
    const owner = new AwsClient({ ...server, service: "s3", region: "us-east-1", retries: 0 });
    const bucket = `versioned-${process.pid}-${Date.now().toString(36)}`;
    const base = `${server.endpoint}/${bucket}`;
    expect((await owner.fetch(base, { method: "PUT" })).status).toBe(200);
    const versioning =
      '<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>';
    expect((await owner.fetch(`${base}?versioning`, { method: "PUT", body: versioning })).status).toBe(200);
    const prefix = freshPrefix("versioned");
    const refused = await rejection(s3Persistence(optionsFor({ ...server, bucket }, prefix)).load());
    expect(refused).toMatchObject({ code: "ERR_BACKEND_UNSUPPORTED" });
    expect((refused as Error).message).toMatch(/If-None-Match.*in a bucket without versioning/);
    // Refused before its claim: the prefix holds no object.
    expect((await owner.fetch(`${base}/${prefix}claim/0000000000000001`, { method: "HEAD" })).status).toBe(404);
    // Suspended, the gateway honours it again: the object opens and commits.
    const suspended = versioning.replace("Enabled", "Suspended");
    expect((await owner.fetch(`${base}?versioning`, { method: "PUT", body: suspended })).status).toBe(200);
    const adapter = s3Persistence(optionsFor({ ...server, bucket }, prefix));
    expect((await adapter.load()).lastSeq).toBe(0);
    await adapter.append([kvRecord(1)]);
  });
});

describe("s3 (Ceph): credentials rotated while an object is open", () => {
  it("a credentials provider's new key is fetched when the gateway refuses the removed one (403 InvalidAccessKeyId, a HEAD's bodiless 403): appends, a holder check and a commit whose key went between its write and its check are confirmed once", async () => {
    if (server.cephDir === undefined) return;
    const tag = `${process.pid.toString(36)}${Date.now().toString(36)}`.toUpperCase();
    let n = 0;
    let current = { accessKeyId: "", secretAccessKey: "" };
    const rotate = async () => {
      const old = current.accessKeyId;
      n++;
      const next = { accessKeyId: `AKROT${tag}N${n}`, secretAccessKey: `SKROT${tag}N${n}` };
      const key = ["--uid=test", "--key-type=s3", `--access-key=${next.accessKeyId}`];
      await radosgwAdmin(server, ["key", "create", ...key, `--secret=${next.secretAccessKey}`]);
      current = next;
      if (old !== "") await radosgwAdmin(server, ["key", "rm", "--uid=test", "--key-type=s3", `--access-key=${old}`]);
    };
    await rotate();
    let calls = 0;
    let rotateAfterLogPut = false;
    const prefix = freshPrefix("rotated");
    const rotating: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const request = input as Request;
      if (rotateAfterLogPut && request.method === "PUT" && request.url.includes(`${prefix}log/`)) {
        rotateAfterLogPut = false;
        await rotate();
      }
      return response;
    };
    const a = s3Persistence(
      optionsFor(server, prefix, {
        credentials: async () => {
          calls++;
          return { ...current };
        },
        fetch: rotating,
      }),
    );
    await a.load();
    await a.append([kvRecord(1)]);
    expect(calls).toBe(1);
    await rotate();
    await a.append([kvRecord(2)]);
    expect(calls).toBe(2);
    await rotate();
    await (a as unknown as { verifyHolder(): Promise<void> }).verifyHolder();
    expect(calls).toBe(3);
    // The log object lands with one key; the key is gone before the claim check that confirms it.
    rotateAfterLogPut = true;
    await a.append([kvRecord(3)]);
    expect(rotateAfterLogPut).toBe(false);
    expect(calls).toBe(4);
    const view = s3Persistence(optionsFor(server, prefix, { readOnly: true }));
    expect((await loadWithRecords(view)).records).toEqual([kvRecord(1), kvRecord(2), kvRecord(3)]);
    await checkInvariants(server, prefix, new Map());
    await radosgwAdmin(server, ["key", "rm", "--uid=test", "--key-type=s3", `--access-key=${current.accessKeyId}`]);
  }, 120_000);
});

describe("s3 (Ceph): versioning turned on while objects are open", () => {
  it("the first create-only write answered with a version id fails with ERR_BACKEND_UNSUPPORTED and is not confirmed; every later write and a reopen are refused too", async () => {
    // The gateway ignores If-None-Match once versioning is enabled, so two holders that reopen
    // meanwhile could both create claim/<e> and both confirm commits at the same log positions.
    // The open's probe ran before: only the answers of later writes can tell.
    const owner = new AwsClient({ ...server, service: "s3", region: "us-east-1", retries: 0 });
    const bucket = `late-versioning-${process.pid}-${Date.now().toString(36)}`;
    const base = `${server.endpoint}/${bucket}`;
    expect((await owner.fetch(base, { method: "PUT" })).status).toBe(200);
    const prefix = freshPrefix("late-versioning");
    const a = s3Persistence(optionsFor({ ...server, bucket }, prefix));
    await a.load();
    await a.append([kvRecord(1)]);
    const enabled =
      '<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>';
    expect((await owner.fetch(`${base}?versioning`, { method: "PUT", body: enabled })).status).toBe(200);
    const refused = await rejection(a.append([kvRecord(2)]));
    expect(refused).toMatchObject({ code: "ERR_BACKEND_UNSUPPORTED" });
    expect((refused as Error).message).toMatch(/x-amz-version-id.*If-None-Match.*in a bucket without versioning/);
    expect(((await rejection(a.append([kvRecord(2)]))) as { code?: string }).code).toBe("ERR_BACKEND_UNSUPPORTED");
    // A reopen skips the probe (it ran once): its claim's answer refuses it.
    expect((await rejection(a.load())) as { code?: string }).toMatchObject({ code: "ERR_BACKEND_UNSUPPORTED" });
    // An open that was not probed yet is refused by its probe, as before.
    const b = s3Persistence(optionsFor({ ...server, bucket }, prefix));
    expect((await rejection(b.load())) as { code?: string }).toMatchObject({ code: "ERR_BACKEND_UNSUPPORTED" });
    // Suspended again: the object opens with the confirmed commit (the unconfirmed one may be there too).
    const suspended = enabled.replace("Enabled", "Suspended");
    expect((await owner.fetch(`${base}?versioning`, { method: "PUT", body: suspended })).status).toBe(200);
    const c = s3Persistence(optionsFor({ ...server, bucket }, prefix));
    const { records } = await loadWithRecords(c);
    expect(records[0]).toEqual(kvRecord(1));
    await c.append([kvRecord(records.length + 1)]);
  });
});

const ROOT = resolve(import.meta.dirname, "../..");
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

interface Holder {
  child: ChildProcess;
  lines: string[];
  confirmed: Map<number, string>;
  /** Resolves once a line matching `re` was printed. */
  waitFor(re: RegExp, count?: number): Promise<void>;
  exited: Promise<number | null>;
}

function startHolder(prefix: string, tag: string): Holder {
  const options = { ...optionsFor(server, prefix), clock: undefined, retries: 2 };
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "test/s3/holder-process.ts", JSON.stringify(options), tag],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  children.push(child);
  const lines: string[] = [];
  const confirmed = new Map<number, string>();
  const waiters: Array<() => void> = [];
  let buffer = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const line of parts) {
      lines.push(line);
      const m = /^confirmed (\d+)$/.exec(line);
      if (m !== null) confirmed.set(Number(m[1]), `${tag}:${m[1]}`);
    }
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  return {
    child,
    lines,
    confirmed,
    exited,
    async waitFor(re, count = 1) {
      while (lines.filter((l) => re.test(l)).length < count) {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`holder exited: ${lines.join(" | ")}`);
        await new Promise<void>((done) => {
          waiters.push(done);
          setTimeout(done, 500);
        });
      }
    },
  };
}

describe("s3 (Ceph): process faults", () => {
  it("two holder processes racing for one object: one is fenced and confirms nothing after the other's claim", async () => {
    const prefix = freshPrefix("race");
    const a = startHolder(prefix, "a");
    const b = startHolder(prefix, "b");
    // Whichever claims last fences the other; the fenced one exits 3.
    const loser = await Promise.race([a.exited.then(() => a), b.exited.then(() => b)]);
    const winner = loser === a ? b : a;
    expect(await loser.exited).toBe(3);
    expect(loser.lines).toContain("fenced");
    await winner.waitFor(/^confirmed/, winner.confirmed.size + 10);
    winner.child.kill("SIGKILL");
    await winner.exited;
    // The winner's load came after its claim: everything the loser confirmed is in what it loaded.
    const loadedLine = winner.lines.find((l) => l.startsWith("loaded ")) as string;
    const winnerLoaded = Number(/^loaded (\d+)/.exec(loadedLine)?.[1]);
    for (const seq of loser.confirmed.keys()) expect(seq).toBeLessThanOrEqual(winnerLoaded);
    // Each confirmed seq holds its own writer's value: no seq was confirmed by both.
    await checkInvariants(server, prefix, new Map([...loser.confirmed, ...winner.confirmed]));
  }, 120_000);

  it("kill -9 of the holder, then takeover: every confirmed commit is present", async () => {
    const prefix = freshPrefix("kill");
    const holder = startHolder(prefix, "a");
    await holder.waitFor(/^confirmed/, 25);
    holder.child.kill("SIGKILL");
    await holder.exited;
    const b = s3Persistence(optionsFor(server, prefix));
    const loaded = await b.load();
    expect(loaded.lastSeq).toBeGreaterThanOrEqual(Math.max(...holder.confirmed.keys()));
    await b.append([
      {
        seq: loaded.lastSeq + 1,
        timeMs: 0,
        reset: false,
        sql: [],
        kv: [{ key: "h", value: new TextEncoder().encode("b") }],
      },
    ]);
    await checkInvariants(server, prefix, holder.confirmed);
  }, 120_000);

  it("SIGSTOP of the holder, takeover, SIGCONT: the old holder is fenced and confirms nothing after the claim", async () => {
    const prefix = freshPrefix("stop");
    const holder = startHolder(prefix, "a");
    await holder.waitFor(/^confirmed/, 10);
    holder.child.kill("SIGSTOP");
    const before = new Map(holder.confirmed);
    const b = s3Persistence(optionsFor(server, prefix));
    const loaded = await b.load();
    const confirmedByB = new Map<number, string>();
    for (let i = 1; i <= 5; i++) {
      const seq = loaded.lastSeq + i;
      await b.append([
        { seq, timeMs: 0, reset: false, sql: [], kv: [{ key: "h", value: new TextEncoder().encode(`b:${seq}`) }] },
      ]);
      confirmedByB.set(seq, `b:${seq}`);
    }
    holder.child.kill("SIGCONT");
    expect(await holder.exited).toBe(3);
    expect(holder.lines).toContain("fenced");
    // Whatever the holder confirmed after it was stopped had landed before b's claim: b loaded it.
    for (const seq of holder.confirmed.keys()) expect(seq).toBeLessThanOrEqual(loaded.lastSeq);
    expect(holder.confirmed.size).toBeGreaterThanOrEqual(before.size);
    await checkInvariants(server, prefix, new Map([...holder.confirmed, ...confirmedByB]));
  }, 120_000);

  it("kill -9 of the gateway mid-stream, then restart: the writer recovers and every confirmed commit is present", async () => {
    if (server.cephDir === undefined) return;
    const prefix = freshPrefix("gateway");
    const writer = s3Persistence({ ...optionsFor(server, prefix), retries: 1 });
    let seq = (await writer.load()).lastSeq + 1;
    const confirmed = new Map<number, string>();
    let failures = 0;
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        try {
          await writer.append([
            { seq, timeMs: 0, reset: false, sql: [], kv: [{ key: "h", value: new TextEncoder().encode(`w:${seq}`) }] },
          ]);
          confirmed.set(seq, `w:${seq}`);
          seq++;
        } catch (error) {
          expect(isFencedError(error)).toBe(false);
          failures++;
          for (;;) {
            try {
              seq = (await writer.load()).lastSeq + 1;
              break;
            } catch {
              await new Promise((done) => setTimeout(done, 200));
            }
          }
        }
      }
    })();
    while (confirmed.size < 10) await new Promise((done) => setTimeout(done, 50));
    await cephScript(server, "kill-gateway");
    await new Promise((done) => setTimeout(done, 1500));
    await cephScript(server, "restart-gateway");
    const after = confirmed.size;
    while (confirmed.size < after + 10) await new Promise((done) => setTimeout(done, 50));
    stop = true;
    await loop;
    expect(failures).toBeGreaterThan(0);
    await checkInvariants(server, prefix, confirmed);
  }, 240_000);
});
