/** Shared helpers for the S3 adapter tests (fake server and Ceph). */
import type { S3PersistenceOptions } from "../../src/s3/options";
import { type Clock, FakeClock, type TimerHandle } from "../../src/util/clock";

/** The longest retry backoff the S3 client waits (s3-client.ts). */
const MAX_BACKOFF_MS = 1000;

/**
 * A clock for the S3 tests: retry backoff (at most 1 s) fires on the next macrotask, without
 * waiting; every longer timer (a request's timeout) waits on `fake`, so it fires only when the
 * test advances `fake`. Tests of timeouts use timeouts above 1 s.
 */
export function quickClockOn(fake: FakeClock): Clock {
  type Handle = { immediate: ReturnType<typeof setImmediate> } | { fake: TimerHandle };
  return {
    now: () => fake.now(),
    setTimer(callback, delayMs) {
      const handle: Handle =
        delayMs <= MAX_BACKOFF_MS ? { immediate: setImmediate(callback) } : { fake: fake.setTimer(callback, delayMs) };
      return handle as unknown as TimerHandle;
    },
    clearTimer(handle) {
      const h = handle as unknown as Handle;
      if ("immediate" in h) clearImmediate(h.immediate);
      else fake.clearTimer(h.fake);
    },
  };
}

/** Backoff without waiting; request timeouts never fire (their fake clock is never advanced). */
export const quickClock: Clock = quickClockOn(new FakeClock());

let counter = 0;

/** A fresh prefix per test, so tests never see each other's objects. */
export function freshPrefix(label: string): string {
  counter++;
  return `${label}-${process.pid}-${Date.now().toString(36)}-${counter}/`;
}

export interface S3Target {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export function optionsFor(
  target: S3Target,
  prefix: string,
  extra: Partial<S3PersistenceOptions> = {},
): S3PersistenceOptions {
  return {
    endpoint: target.endpoint,
    bucket: target.bucket,
    prefix,
    region: "us-east-1",
    credentials: { accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey },
    retries: 4,
    clock: quickClock,
    ...extra,
  };
}
