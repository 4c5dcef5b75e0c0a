/**
 * Vitest globalSetup for the S3 adapter's real-server tests: gives the run a working directory for
 * a single-node Ceph RADOS Gateway, which the Ceph test files start on first use (test/s3/ceph.ts:
 * installs Debian's packages when missing, then scripts/ceph-s3.sh), and stops it when the run ends.
 * Runs that include no Ceph test never start it.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Where this run's Ceph lives (see test/s3/ceph.ts). */
    cephRunDir: string;
  }
}

const SCRIPT = resolve(import.meta.dirname, "../../scripts/ceph-s3.sh");

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runDir = await mkdtemp(join(tmpdir(), "actorstore-ceph-"));
  project.provide("cephRunDir", runDir);
  return async () => {
    const cephDir = join(runDir, "ceph");
    if (existsSync(join(cephDir, "pids")) || existsSync(join(cephDir, "rgw.pid"))) {
      await promisify(execFile)("bash", [SCRIPT, "stop"], { env: { ...process.env, CEPH_DIR: cephDir } }).catch(
        () => undefined,
      );
    }
    await rm(runDir, { recursive: true, force: true });
  };
}
