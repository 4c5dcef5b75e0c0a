/** Shared helpers for the S3 adapter tests (fake server and Ceph). */
import type { S3PersistenceOptions } from "../../src/s3/options";
import type { Clock, TimerHandle } from "../../src/util/clock";

/** Retry backoff without waiting: timers fire on the next macrotask. */
export const quickClock: Clock = {
  now: () => Date.now(),
  setTimer(callback) {
    return setImmediate(callback) as unknown as TimerHandle;
  },
  clearTimer(handle) {
    clearImmediate(handle as unknown as ReturnType<typeof setImmediate>);
  },
};

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
