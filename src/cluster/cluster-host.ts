/**
 * Hosts on several processes (or machines) that share a store form a cluster with no coordinator:
 *
 * - membership: each host records itself (id, address, heartbeat) in a shared directory or a shared
 *   bucket (membership.ts, bucket.ts);
 * - ownership: an object's owner is chosen by rendezvous hashing over the live members
 *   (rendezvous.ts), so every host computes the same owner from the same view;
 * - forwarding: a stub call for an object another host owns is sent to it over HTTP (wire.ts); each
 *   host serves that endpoint. A host that receives an operation for an object it does not own (its
 *   view differs) answers 421 and the sender re-reads the members and tries again;
 * - hand-over: when the members change, a host evicts the objects it no longer owns (they are flushed
 *   and closed), and the new owner starts them from the store on their next event. `drain()` does
 *   that for every object at once before a deploy.
 *
 * What membership cannot do is keep two hosts from writing one object while their views differ (a
 * paused process, a slow heartbeat). That is the store's job: a persistence adapter with an
 * exclusive claim per object (the S3 adapter's fencing, or the file adapter's per-directory lock on
 * one machine). Over a bucket, every start of an object claims it and fences the previous holder; a
 * host whose object is fenced drops it and sends its events to the holder recorded in the bucket
 * (holding beats hashing: a host serves an object it holds), and starts it again only once that
 * holder no longer has it. See docs/hosting.md for what is and is not guaranteed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ObjectId } from "../context/object-id";
import { isFencedError } from "../durability/persistence";
import { ActorStoreError } from "../errors";
import { cloneResult } from "../host/boundary";
import type { HostEnv, NamespaceClasses, ObjectHostOptions } from "../host/host-types";
import type { StubBinding, StubOperation } from "../host/namespace";
import { createRoutedHost, type HostInternals, hostInternals, type ObjectHost } from "../host/object-host";
import { type Clock, systemClock } from "../util/clock";
import {
  ClusterBucket,
  type ClusterBucketOptions,
  type HeldStore,
  holderOf,
  objectsIn,
  recordingHolders,
} from "./bucket";
import {
  answerCall,
  type BodyReader,
  bodyReader,
  connectFailure,
  decodeArguments,
  describeFailure,
  type ForwardAnswer,
  type ForwardedRequest,
  ForwardRefusal,
  MAX_FORWARDED_FETCH_BYTES,
  MAX_FORWARDED_RPC_BYTES,
  parseForwarded,
  readBody,
  sendForwarded,
} from "./forwarding";
import { eachBounded, gainsObjects, HAND_OVER_WIDTH, LostObjects } from "./hand-over";
import { BucketMembership, DirectoryMembership, type Membership } from "./membership";
import { rendezvousOwner } from "./rendezvous";
import { encode, toWireError } from "./wire";

export { MAX_FORWARDED_FETCH_BYTES, MAX_FORWARDED_RPC_BYTES } from "./forwarding";

/** Options of {@link ClusterHost.start}: the host's options plus where the cluster meets. */
export interface ClusterHostOptions<N extends NamespaceClasses, E = object> extends ObjectHostOptions<N, E> {
  cluster: {
    /** The directory the hosts share for membership (and, in the demo, for the objects' data). */
    directory?: string;
    /**
     * The bucket the hosts share, instead of a directory: membership, who holds which object and the
     * alarm index live under its prefix, and (unless `persistence` says otherwise) each object's data
     * too, under `<prefix>objects/<namespace>/<id>/` with the S3 adapter, whose fencing keeps one
     * writer per object. See docs/hosting.md.
     */
    bucket?: ClusterBucketOptions;
    /** This host's id, unique in the cluster. */
    id: string;
    /** Where to serve forwarded operations. Default 127.0.0.1 and a free port. */
    hostname?: string;
    port?: number;
    /** Heartbeat period. Default 1,000 ms. */
    heartbeatMs?: number;
    /** A member whose heartbeat is older than this is dead. Default 5,000 ms. */
    ttlMs?: number;
    /**
     * How long a forwarded operation may take before the caller gets `ERR_UNAVAILABLE` (in real time;
     * such an operation is not retried, since the owner may have run it). Default 30,000 ms.
     */
    forwardTimeoutMs?: number;
  };
}

/** How many times an operation follows a 421 (a host with another view) before giving up. */
const MAX_HOPS = 4;

/** Where an operation goes (see `#target`). */
type Target = "local" | "none" | "unknown" | { host: string; address: string; holderOnly: boolean };

/**
 * One host of a cluster.
 *
 * @example
 * ```ts
 * const node = await ClusterHost.start({
 *   namespaces: { COUNTER: Counter },
 *   persistence: directoryPerObject("/shared/data"),
 *   cluster: { directory: "/shared/cluster", id: "host-a", port: 8801 },
 * });
 * await node.env.COUNTER.getByName("a").increment(1); // served here or forwarded to the owner
 * await node.drain();                                  // before a deploy
 * await node.close();
 * ```
 */
export class ClusterHost<N extends NamespaceClasses = NamespaceClasses, E = object> {
  /** The local host (its `env` routes through the cluster). */
  readonly host: ObjectHost<N, E>;
  /** This host's membership record. */
  readonly membership: Membership;
  readonly #internals: HostInternals;
  readonly #bucket: ClusterBucket | undefined;
  /** Objects this host lost to a newer holder (fenced): their events go to that holder. */
  readonly #lost: LostObjects;
  /** The stores of the objects this host started over the bucket (checked before each event). */
  #held = new Map<string, HeldStore>();
  #fenced = 0;
  readonly #server: Server;
  readonly #ttlMs: number;
  readonly #forwardTimeoutMs: number;
  #draining = false;
  #handingOver: Promise<void> = Promise.resolve();
  /** The live members as of the last change (undefined before the first). */
  #view: readonly string[] | undefined;
  #closed = false;
  #forwarded = 0;
  #served = 0;

  private constructor(
    host: ObjectHost<N, E>,
    membership: Membership,
    server: Server,
    bucket: ClusterBucket | undefined,
    ttlMs: number,
    forwardTimeoutMs: number,
    clock: Clock,
  ) {
    this.#lost = new LostObjects(clock, 10 * ttlMs);
    this.#bucket = bucket;
    this.#ttlMs = ttlMs;
    this.#forwardTimeoutMs = forwardTimeoutMs;
    this.host = host;
    this.membership = membership;
    this.#internals = hostInternals(host as unknown as ObjectHost<NamespaceClasses, unknown>);
    this.#server = server;
  }

  /** Starts the host: serves the forwarding endpoint and joins the cluster. */
  static async start<N extends NamespaceClasses, E = object>(
    options: ClusterHostOptions<N, E>,
  ): Promise<ClusterHost<N, E>> {
    const { cluster, ...hostOptions } = options;
    if (
      cluster === undefined ||
      typeof cluster.id !== "string" ||
      (cluster.directory === undefined) === (cluster.bucket === undefined) ||
      (cluster.directory !== undefined && typeof cluster.directory !== "string")
    ) {
      throw new TypeError('ClusterHost: option "cluster" needs { id } and one of { directory } or { bucket }.');
    }
    const clock = hostOptions.clock ?? systemClock;
    const bucket = cluster.bucket === undefined ? undefined : new ClusterBucket(cluster.bucket);
    const held = new Map<string, HeldStore>();
    if (bucket !== undefined) {
      hostOptions.persistence = recordingHolders(
        hostOptions.persistence ?? objectsIn(bucket),
        bucket,
        cluster.id,
        held,
      );
    }
    let self: ClusterHost<N, E> | undefined;
    const host = createRoutedHost<N, E>(hostOptions, {
      router: (local) => ({
        dispatch: (ns, id, binding, op) => {
          if (self === undefined) return local.dispatch(ns, id, binding, op);
          return self.#route(ns, id, binding, op);
        },
      }),
      onFenced: (ns, id) => {
        if (self === undefined) return;
        self.#fenced++;
        self.#lost.add(`${ns}/${id.toString()}`);
      },
      // A holder that lost the object (paused while another host claimed it) must not run its
      // alarm from the state it held: the new holder runs it.
      beforeAlarm: async (ns, id) => {
        if (self !== undefined) await self.#verifyHeld(ns, id);
      },
    });
    // An id's name travels in a header, and a name has no length limit: the headers may be as large
    // as a call's arguments.
    const server = createServer({ maxHeaderSize: MAX_FORWARDED_RPC_BYTES }, (req, res) => {
      if (self === undefined) {
        res.writeHead(503).end();
        return;
      }
      self.#serve(req, res).catch(() => res.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(cluster.port ?? 0, cluster.hostname ?? "127.0.0.1", () => resolve());
    });
    const address = server.address() as AddressInfo;
    const membershipOptions = {
      id: cluster.id,
      address: `http://${cluster.hostname ?? "127.0.0.1"}:${address.port}`,
      clock,
      ...(cluster.heartbeatMs === undefined ? {} : { heartbeatMs: cluster.heartbeatMs }),
      ...(cluster.ttlMs === undefined ? {} : { ttlMs: cluster.ttlMs }),
      onChange: (live: readonly string[]) => {
        const node = self;
        if (node === undefined) return;
        const before = node.#view;
        node.#view = live;
        node.#handingOver = node.#handingOver.then(() => node.#handOver(before, live));
      },
    };
    const membership =
      bucket !== undefined
        ? new BucketMembership({ ...membershipOptions, bucket })
        : new DirectoryMembership({ ...membershipOptions, directory: cluster.directory as string });
    self = new ClusterHost(
      host,
      membership,
      server,
      bucket,
      cluster.ttlMs ?? 5_000,
      cluster.forwardTimeoutMs ?? 30_000,
      clock,
    );
    self.#held = held;
    try {
      await membership.join();
    } catch (e) {
      await self.crashForTest().catch(() => {});
      throw e;
    }
    return self;
  }

  /** The env: namespaces whose stubs reach an object wherever the cluster runs it. */
  get env(): HostEnv<N, E> {
    return this.host.env;
  }

  /** The id of this host. */
  get id(): string {
    return this.membership.id;
  }

  /** The forwarding address of this host. */
  get address(): string {
    return this.membership.address;
  }

  /** The live member that owns an object now, by this host's view. */
  ownerOf(namespace: string, id: ObjectId | string): string | undefined {
    return rendezvousOwner(`${namespace}/${id.toString()}`, this.membership.live());
  }

  /** Resolves when the hand-over after the last membership change is done and the host is settled. */
  async settled(): Promise<void> {
    await this.#handingOver;
    await this.host.settled();
  }

  /**
   * Operations this host sent to others, operations it served for others, objects it lost to a
   * newer holder (fenced, so far), and how many of those it remembers now (`lost`: their events go
   * to that holder; see docs/hosting.md).
   */
  stats(): { forwarded: number; served: number; fenced: number; lost: number } {
    return { forwarded: this.#forwarded, served: this.#served, fenced: this.#fenced, lost: this.#lost.size };
  }

  /**
   * Hands every object over before a deploy: leaves the membership (the others stop routing here at
   * their next refresh), then evicts every object (flushing and closing it), so the next owner can
   * start it at once. Operations that still arrive are forwarded to the new owners.
   */
  async drain(): Promise<void> {
    this.#draining = true;
    await this.membership.leave();
    for (let round = 0; round < 50; round++) {
      await this.#handingOver;
      await this.host.evictIdle();
      await this.host.settled();
      if (this.#internals.held().length === 0) break;
      // Events still in flight: wait for them in real time (not on the objects' clock).
      await new Promise<void>((resolve) => systemClock.setTimer(resolve, 10));
    }
  }

  /** Stops serving, leaves the cluster (unless already drained) and closes every object. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#draining) await this.membership.leave().catch(() => {});
    this.membership.stop();
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections?.();
    });
    await this.host.close();
  }

  /**
   * Simulates a crash for tests: stops the heartbeat and the server without leaving the membership
   * (the record stays until its heartbeat is too old), and closes the objects so that the store's
   * lock is released, as the death of the process would.
   */
  async crashForTest(): Promise<void> {
    this.#closed = true;
    this.membership.stop();
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections?.();
    });
    await this.host.close();
  }

  // ------------------------------------------------------------------ routing

  async #route(ns: string, id: ObjectId, binding: StubBinding, op: StubOperation): Promise<unknown> {
    const key = `${ns}/${id.toString()}`;
    // A fetch's body can be read only once: the first forward reads it, and a retry (a 421, a
    // connection refused) sends the same bytes again, or runs the object here with them.
    const body = op.kind === "fetch" ? bodyReader(op.request) : undefined;
    let redirect: Target | undefined;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const target = redirect ?? (await this.#target(ns, id));
      redirect = undefined;
      if (target === "local") {
        const bytes = body?.read === true ? await body.bytes() : undefined;
        if (op.kind === "fetch" && bytes instanceof Uint8Array)
          op = { kind: "fetch", request: new Request(op.request, { body: bytes }) };
        try {
          return await this.#local(ns, id, binding, op);
        } catch (e) {
          // Another host claimed the object while it started here (our view was stale): the
          // operation did not run, and goes to that holder (the object is marked lost).
          if (!this.#startFenced(e) || hop === MAX_HOPS - 1) throw e;
          await this.membership.refresh().catch(() => {});
          continue;
        }
      }
      if (target === "none") {
        throw new ActorStoreError(
          "ERR_UNAVAILABLE",
          `No live host in the cluster can serve ${ns} object ${id.toString()}; start a host or wait for one to join.`,
        );
      }
      if (target === "unknown") {
        await this.membership.refresh();
        continue;
      }
      let answer: ForwardAnswer;
      try {
        answer = await this.#forward(target.address, ns, id, op, target.holderOnly, body);
      } catch (e) {
        const code = connectFailure(e);
        if (code === undefined) {
          // The request may have reached the owner (no answer in time, a connection that broke off):
          // it may or may not have run, so it is not sent again.
          const what =
            (e as { name?: unknown })?.name === "TimeoutError"
              ? `did not answer within ${this.#forwardTimeoutMs} ms`
              : `stopped answering (${describeFailure(e)})`;
          throw new ActorStoreError(
            "ERR_UNAVAILABLE",
            `Host ${target.host} ${what}; the operation on ${ns} object ${id.toString()} may or may not have run.`,
            { cause: e },
          );
        }
        // Never delivered (nothing listens there: the host died or is restarting), so it is safe to
        // send again once the members were re-read. The holder we were sent to is gone: the object
        // is ours to start again.
        if (target.holderOnly) this.#lost.delete(key);
        if (hop === MAX_HOPS - 1) {
          throw new ActorStoreError(
            "ERR_UNAVAILABLE",
            `Host ${target.host} could not be reached (${code}); the operation on ${ns} object ${id.toString()} did not run. A host that died stops being routed to once its heartbeat is older than ttlMs; try again then.`,
            { cause: e },
          );
        }
        await this.membership.refresh();
        continue;
      }
      // What the object threw (or the host refused) reaches the caller as it is: it ran once, or not at all.
      if ("thrown" in answer) throw answer.thrown;
      if ("misdirected" in answer) {
        // The holder we were sent to no longer holds the object: it is ours to start again.
        if (target.holderOnly) this.#lost.delete(key);
        if (answer.holder !== undefined && answer.holder !== this.id) {
          const member = this.membership.member(answer.holder);
          if (member !== undefined && this.membership.live().includes(answer.holder))
            redirect = { host: answer.holder, address: member.address, holderOnly: true };
        }
        // The owner's view differs from ours: re-read the members and retry.
        if (redirect === undefined) await this.membership.refresh();
        continue;
      }
      return answer.value;
    }
    throw new ActorStoreError(
      "ERR_UNAVAILABLE",
      `The hosts of the cluster disagree about who owns ${ns} object ${id.toString()}; try again once membership settles.`,
    );
  }

  /**
   * Where an operation goes now, by this host's view: here when it holds the object (holding beats
   * hashing) or owns it by the hash; the holder recorded in the bucket when it owns it but lost it to
   * that holder (fenced); otherwise the owner by the hash.
   */
  async #target(ns: string, id: ObjectId): Promise<Target> {
    if (!this.#draining && (await this.#stillHolds(ns, id))) return "local";
    const key = `${ns}/${id.toString()}`;
    const live = this.membership.live();
    const owner = rendezvousOwner(key, live);
    if (owner === undefined) return "none";
    if (owner === this.id && !this.#draining) {
      if (this.#lost.has(key)) {
        const holder = await this.#holderOf(ns, id);
        const member =
          holder !== undefined && holder !== this.id && live.includes(holder)
            ? this.membership.member(holder)
            : undefined;
        if (member !== undefined) return { host: member.id, address: member.address, holderOnly: true };
        this.#lost.delete(key);
      }
      return "local";
    }
    const member = this.membership.member(owner);
    return member === undefined ? "unknown" : { host: owner, address: member.address, holderOnly: false };
  }

  /**
   * Whether this host holds the object and may serve it. Over a bucket, a holder first checks that
   * no newer claim exists: a host that was paused past its heartbeat, or whose object another host
   * started meanwhile, must not answer reads from a state the new holder has moved past. A fenced
   * object is dropped at once, and its events go to the holder the bucket names.
   */
  async #stillHolds(ns: string, id: ObjectId): Promise<boolean> {
    if (!this.#internals.holds(ns, id)) return false;
    try {
      await this.#verifyHeld(ns, id);
      return this.#internals.holds(ns, id);
    } catch (e) {
      if (!isFencedError(e)) throw e;
      return false;
    }
  }

  /**
   * Resolves while no newer claim of a held object exists (over a bucket; elsewhere at once);
   * rejects with `ERR_FENCED` once one does, after dropping the object and marking it lost (its
   * events go to the holder the bucket names).
   */
  async #verifyHeld(ns: string, id: ObjectId): Promise<void> {
    const key = `${ns}/${id.toString()}`;
    const store = this.#held.get(key);
    if (store === undefined) return;
    try {
      await store.verifyHolder();
    } catch (e) {
      if (!isFencedError(e)) throw e;
      this.#held.delete(key);
      this.#internals.dropFenced(ns, id);
      this.#lost.add(key);
      // Another host took the object while this one did not look: its view of the members is stale.
      await this.membership.refresh().catch(() => {});
      throw e;
    }
  }

  /** Whether `error` is a start of an object that a newer claim fenced: the operation did not run. */
  #startFenced(error: unknown): boolean {
    return isFencedError(error) && this.#internals.undelivered(error);
  }

  /** The host the bucket names as the object's last claimer, if any. */
  async #holderOf(ns: string, id: ObjectId): Promise<string | undefined> {
    return this.#bucket === undefined ? undefined : holderOf(this.#bucket, ns, id.toString());
  }

  async #forward(
    address: string,
    ns: string,
    id: ObjectId,
    op: StubOperation,
    holderOnly: boolean,
    fetchBody: BodyReader | undefined,
  ): Promise<ForwardAnswer> {
    this.#forwarded++;
    return sendForwarded({
      address,
      from: this.id,
      ns,
      id,
      op,
      holderOnly,
      fetchBody,
      timeoutMs: this.#forwardTimeoutMs,
    });
  }

  /**
   * Runs an operation on a local object. While the previous owner still holds the object's store
   * (`ERR_LOCKED`: it is handing the object over, or it is paused and still holds it), waits and
   * tries again for up to `ttlMs`, in real time: this waits for another process, not for the
   * object's logical clock.
   */
  async #local(ns: string, id: ObjectId, binding: StubBinding, op: StubOperation): Promise<unknown> {
    const deadline = systemClock.now() + this.#ttlMs;
    for (;;) {
      try {
        return await this.#internals.dispatch(ns, id, binding, op);
      } catch (e) {
        if (!(e instanceof ActorStoreError && e.code === "ERR_LOCKED") || systemClock.now() >= deadline) throw e;
        await new Promise<void>((resolve) => systemClock.setTimer(resolve, 50));
      }
    }
  }

  // ------------------------------------------------------------------ serving

  /**
   * Serves one forwarded operation. Nothing a peer (or anything else that reaches the port) sends
   * can crash the host or touch another object: a malformed path, name or body is answered 400, a
   * body over the limit 413, a request whose connection breaks off is dropped, and a failure of the
   * host's own (its bucket not answering, say) reaches the sender as the operation's error.
   */
  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let parsed: ForwardedRequest;
    try {
      parsed = parseForwarded(req, this.env as Record<string, unknown>);
    } catch (e) {
      const status = e instanceof ForwardRefusal ? e.status : 400;
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(String((e as Error).message));
      return;
    }
    const { ns, id, kind, member } = parsed;
    try {
      // Sent to the holder of an object: serve it only while holding it (never start it again here).
      const holderOnly = req.headers["x-actorstore-holder-only"] === "1";
      let target = holderOnly
        ? !this.#draining && (await this.#stillHolds(ns, id))
          ? "local"
          : "none"
        : await this.#target(ns, id);
      if (typeof target === "object" && target.holderOnly && target.host === req.headers["x-actorstore-from"]) {
        // The host we would send it to is the sender, which routed by the hash: it no longer holds the
        // object, which is ours to start again.
        this.#lost.delete(`${ns}/${id.toString()}`);
        target = "local";
      }
      if (target !== "local") {
        const headers: Record<string, string> = { "x-actorstore-owner": this.ownerOf(ns, id) ?? "" };
        // Owned here by the hash but held by the host that fenced us: the sender goes there.
        if (typeof target === "object" && target.holderOnly) headers["x-actorstore-holder"] = target.host;
        res.writeHead(421, headers).end();
        return;
      }
      const body = await readBody(req, kind === "fetch" ? MAX_FORWARDED_FETCH_BYTES : MAX_FORWARDED_RPC_BYTES);
      this.#served++;
      const binding: StubBinding = { token: null };
      if (kind === "fetch") {
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) {
          if (v === undefined || k.startsWith("x-actorstore-") || k === "host" || k === "content-length") continue;
          headers.set(k, Array.isArray(v) ? v.join(", ") : v);
        }
        const method = String(req.headers["x-actorstore-method"] ?? "GET");
        const request = new Request(String(req.headers["x-actorstore-url"] ?? "http://object/"), {
          method,
          headers,
          ...(method === "GET" || method === "HEAD" ? {} : { body }),
        });
        const response = (await this.#local(ns, id, binding, { kind: "fetch", request })) as Response;
        const bytes = Buffer.from(await response.arrayBuffer());
        const out: Record<string, string> = {};
        response.headers.forEach((value, key) => {
          if (key !== "x-actorstore-status") out[key] = value;
        });
        // Node's fetch sends a request answered 421 once more by itself: the object's own 421 would
        // run its handler twice. It crosses as 200 with the status in a header (forwarding.ts).
        if (response.status === 421) out["x-actorstore-status"] = "421";
        res.writeHead(response.status === 421 ? 200 : response.status, response.statusText, out).end(bytes);
        return;
      }
      let op: StubOperation;
      if (kind === "call") {
        const args = decodeArguments(body);
        op = { kind: "call", method: member, args };
      } else op = kind === "start" ? { kind: "start" } : { kind: "get", property: member };
      // The result crosses the boundary as it would on one host: what could not be cloned there
      // (an instance of a class of the user's own, a function) fails with the same DataCloneError.
      const value = cloneResult(await this.#local(ns, id, binding, op));
      answerCall(res, { ok: true, value });
    } catch (e) {
      if (this.#startFenced(e) && !res.headersSent) {
        // The object's start here was fenced by a newer holder: the operation did not run; the
        // sender goes to that holder.
        const headers: Record<string, string> = { "x-actorstore-owner": this.ownerOf(ns, id) ?? "" };
        const holder = await this.#holderOf(ns, id);
        if (holder !== undefined && holder !== this.id) headers["x-actorstore-holder"] = holder;
        res.writeHead(421, headers).end();
        return;
      }
      if (e instanceof ForwardRefusal) {
        if (!res.headersSent)
          res.writeHead(e.status, { "content-type": "text/plain; charset=utf-8", connection: "close" }).end(e.message);
        else res.destroy();
        return;
      }
      if (req.errored !== null || res.headersSent || res.destroyed) {
        // The sender is gone (its connection broke off mid-request), or the answer was already
        // under way: nothing can reach it any more.
        res.destroy();
        return;
      }
      if (kind === "fetch") {
        res
          .writeHead(500, { "x-actorstore-error": "1", "content-type": "application/octet-stream" })
          .end(encode({ ok: false, error: toWireError(e) }));
      } else answerCall(res, { ok: false, error: toWireError(e) });
    }
  }

  /**
   * After the members changed (from `before` to `after`): evict every local object another host
   * owns now, a bounded number at a time; forget the lost objects that no longer matter; and,
   * when the change can have given this host objects (a member is gone, or this is its first view),
   * plan wake-ups for the indexed alarms of the objects it owns now (a dead host's included).
   */
  async #handOver(before: readonly string[] | undefined, after: readonly string[]): Promise<void> {
    if (this.#closed) return;
    this.#lost.prune();
    const leaving = this.#internals.held().filter(({ namespace, id }) => this.ownerOf(namespace, id) !== this.id);
    await eachBounded(leaving, HAND_OVER_WIDTH, ({ namespace, id }) => {
      // One busy now (events in flight) goes as soon as they end, if it still belongs elsewhere then.
      const elsewhere = () => !this.#closed && this.ownerOf(namespace, id) !== this.id;
      return elsewhere() ? this.#internals.evict(namespace, id, elsewhere) : Promise.resolve();
    });
    if (this.#closed || this.#draining || !gainsObjects(before, after)) return;
    await this.#internals.scanAlarms((namespace, id) => this.ownerOf(namespace, id) === this.id).catch(() => {});
  }
}
