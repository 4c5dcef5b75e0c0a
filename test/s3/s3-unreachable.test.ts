/**
 * A store that cannot be reached, seen from a plain Node process (no test runner keeping it alive):
 * the S3 client's retries of a refused connection wait between attempts, and that wait is work a
 * caller awaits. Each case must end with the error, not with Node exiting in the middle of the
 * backoff (exit code 13, "unsettled top-level await", and no message at all).
 */
import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const tsxLoader = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;

/** A loopback port nothing listens on: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", tsxLoader, ...args],
      { cwd: ROOT, timeout: 60_000, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("an unreachable store, from a plain Node process", () => {
  it("ObjectStorage.open over s3Persistence rejects with the store's error instead of the process exiting mid-retry", async () => {
    const port = await closedPort();
    const script = `
      import { ObjectStorage } from ${JSON.stringify(pathToFileURL(join(ROOT, "src/index.ts")).href)};
      import { s3Persistence } from ${JSON.stringify(pathToFileURL(join(ROOT, "src/s3/index.ts")).href)};
      const persistence = s3Persistence({
        endpoint: "http://127.0.0.1:${port}", bucket: "objects", prefix: "room-1/", region: "us-east-1",
        credentials: { accessKeyId: "AKUNREACHABLE", secretAccessKey: "unreachable-secret" },
      });
      try {
        await ObjectStorage.open({ persistence });
        console.log("opened");
      } catch (e) {
        console.log("rejected:", e instanceof Error ? e.message : String(e));
      }
    `;
    const result = await run(["--input-type=module", "-e", script]);
    expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/^rejected: .*127\.0\.0\.1/) });
    expect(result.stdout + result.stderr).not.toContain("unreachable-secret");
  });

  it("actorstore-inspect s3://… says the store cannot be reached and exits 1", async () => {
    const port = await closedPort();
    const result = await run([join(ROOT, "src/cli/inspect.ts"), "s3://objects/room-1/", "keys"], {
      ACTORSTORE_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      AWS_ACCESS_KEY_ID: "AKUNREACHABLE",
      AWS_SECRET_ACCESS_KEY: "unreachable-secret",
    });
    expect(result).toMatchObject({ code: 1, stdout: "", stderr: expect.stringMatching(/^error: .*127\.0\.0\.1/) });
    expect(result.stderr).not.toContain("unreachable-secret");
  });
});
