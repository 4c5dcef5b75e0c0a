#!/usr/bin/env node
/**
 * `actorstore-api serve`: the local v4 API over HTTP.
 *
 *   npx actorstore-api serve --port 8787 --directory ./api-data --token local-token [--fixture fixture.json]
 *                            [--email user@example.com --key <37-character key>] [--host 127.0.0.1]
 */
import { startApiServer } from "./http-server";
import type { ApiKeyCredential } from "./options";
import { stateDirectoryRefusal } from "./state-directory";

const USAGE = `Usage: actorstore-api serve [options]

Serves the local v4 API (see docs/api.md).

Options:
  --port <n>         TCP port (default 8787; 0 picks a free one)
  --host <address>   interface to listen on (default 127.0.0.1)
  --directory <dir>  keep the state in this directory (default: in memory, lost on exit);
                     not an actorstore object's directory or a host's root
  --fixture <file>   JSON fixture to seed an empty state from
  --token <token>    accept this API token (repeatable)
  --email <email>    with --key: accept this email and Global API Key pair (repeatable, in pairs)
  --key <key>
  --max-request-bytes <n>
                     answer a larger request body 413 (default 104857600, 100 MiB)
  --help             show this text

Every option's value may also be given as --option=value. Errors never repeat a value.
`;

interface Parsed {
  port: number;
  host: string;
  directory?: string;
  fixture?: string;
  tokens: string[];
  keys: ApiKeyCredential[];
  maxRequestBytes?: number;
}

function parse(args: readonly string[]): Parsed | string {
  const out: Parsed = { port: 8787, host: "127.0.0.1", tokens: [], keys: [] };
  const emails: string[] = [];
  const keys: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    // Values may be secrets (tokens, keys): an error names the option or the argument's position,
    // never the text. `--name=value` gives the value in the same argument.
    if (!arg.startsWith("--")) {
      return `Unexpected argument #${i + 1} (not shown: it may be a secret); every value follows its option, e.g. --token <token>.`;
    }
    const eq = arg.indexOf("=");
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const need = (): string => {
      if (inline !== undefined) {
        if (inline.length === 0) throw new Error(`${flag} needs a value.`);
        return inline;
      }
      const value = args[i + 1];
      if (value === undefined || value.startsWith("--")) throw new Error(`${flag} needs a value.`);
      i++;
      return value;
    };
    switch (flag) {
      case "--port": {
        const n = Number(need());
        if (!Number.isInteger(n) || n < 0 || n > 65535) return "--port must be an integer from 0 to 65535.";
        out.port = n;
        break;
      }
      case "--host":
        out.host = need();
        break;
      case "--max-request-bytes": {
        const n = Number(need());
        if (!Number.isSafeInteger(n) || n < 1) return "--max-request-bytes must be a positive integer (bytes).";
        out.maxRequestBytes = n;
        break;
      }
      case "--directory":
        out.directory = need();
        break;
      case "--fixture":
        out.fixture = need();
        break;
      case "--token":
        out.tokens.push(need());
        break;
      case "--email":
        emails.push(need());
        break;
      case "--key":
        keys.push(need());
        break;
      default:
        return `Unknown option ${flag}.`;
    }
  }
  if (emails.length !== keys.length) return "--email and --key come in pairs.";
  out.keys = emails.map((email, i) => ({ email, key: keys[i] ?? "" }));
  if (out.tokens.length === 0 && out.keys.length === 0) {
    return "Give at least one --token (or an --email and --key pair): the API refuses requests without known credentials.";
  }
  return out;
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  // Exit codes as actorstore-inspect's: 0 done, 1 failed, 2 a usage error (the usage on stderr).
  if (command === undefined) {
    process.stderr.write(USAGE);
    return 2;
  }
  if (command === "--help" || command === "help" || rest.includes("--help")) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command !== "serve") {
    process.stderr.write(`Unknown command ${command}.\n\n${USAGE}`);
    return 2;
  }
  let parsed: Parsed | string;
  try {
    parsed = parse(rest);
  } catch (e) {
    parsed = (e as Error).message;
  }
  if (typeof parsed === "string") {
    process.stderr.write(`${parsed}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.directory !== undefined) {
    // A usage error too: the server would write its own objects into an object's directory or
    // among a host's namespaces. (startApiServer refuses it as well, with ERR_DIRECTORY.)
    const refusal = await stateDirectoryRefusal(parsed.directory, "--directory");
    if (refusal !== undefined) {
      process.stderr.write(`${refusal}\n\n${USAGE}`);
      return 2;
    }
  }
  const server = await startApiServer({
    credentials: { tokens: parsed.tokens, keys: parsed.keys },
    port: parsed.port,
    hostname: parsed.host,
    ...(parsed.directory === undefined ? {} : { directory: parsed.directory }),
    ...(parsed.fixture === undefined ? {} : { fixture: parsed.fixture }),
    ...(parsed.maxRequestBytes === undefined ? {} : { maxRequestBytes: parsed.maxRequestBytes }),
  });
  process.stdout.write(`actorstore-api listening on ${server.url}\n`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return -1;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (e: unknown) => {
    const code = (e as { code?: unknown }).code;
    const message =
      code === "EADDRINUSE"
        ? `${(e as Error).message}: another process (perhaps an earlier actorstore-api) listens there; stop it, or choose another --port (0 picks a free one).`
        : e instanceof Error
          ? e.message
          : String(e);
    process.stderr.write(`actorstore-api: ${message}\n`);
    process.exitCode = 1;
  },
);
