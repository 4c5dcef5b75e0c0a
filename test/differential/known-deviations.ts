/**
 * Every place where ObjectStorage is *meant* to differ from local workerd, with the reason.
 *
 * The random suites exclude exactly these cases by never generating them (keys of a few bytes,
 * small values, at most 6 keys per multi-key op; see `arbitraries.ts`). Each deviation is instead
 * checked here on purpose: local workerd's SQLite backend must still accept the input (otherwise
 * the deviation is gone and the entry should be deleted), and ObjectStorage must reject it with the
 * message the platform's production backend uses.
 */
import type { Op, OpResult } from "./ops";
import type { WorkerdBackend } from "./workerd";

/** One intended deviation. */
export interface KnownDeviation {
  readonly id: string;
  /** Why ObjectStorage differs from local workerd here. */
  readonly reason: string;
  /** A minimal transcript that shows it. */
  readonly ops: readonly Op[];
  /**
   * What ObjectStorage must return: either "the same as this workerd backend" (the production-style
   * `ActorCache` enforces the same check with the same text), or the exact results.
   */
  readonly subjectExpected: { readonly sameAs: WorkerdBackend } | { readonly results: readonly OpResult[] };
}

const LIMITS_REASON =
  "The storage interface (issue 2) requires the production limits (2048-byte keys, 131072-byte values, 128 keys per " +
  "multi-key op) on both backends by default. Local workerd enforces them only on its ActorCache " +
  "(KV) backend, never on ActorSqlite, so `useSQLite: true` accepts these inputs.";

const longKey = "k".repeat(2049);
const manyKeys = Array.from({ length: 129 }, (_, i) => `key${i}`);
const tooMany = (pairs: number): OpResult => ({
  ok: false,
  error: { name: "RangeError", message: `Maximum number of key value pairs is 128. ${pairs} pairs were provided.` },
});

const notAuthorized: OpResult = { ok: false, error: { name: "Error", message: "not authorized: SQLITE_AUTH" } };

/** The list. Add an entry only with a reason a reviewer can check against the storage interface. */
export const KNOWN_DEVIATIONS: readonly KnownDeviation[] = [
  {
    id: "internal-names-any-case",
    reason:
      "SQLite resolves names ignoring case, so `_CF_KV` is the internal `_cf_KV`. workerd v1.20260426 checks the " +
      "`_cf_` prefix case-sensitively and only on the source of a rename; the platform's newer check refuses any " +
      "spelling, and issue 14 requires it (a case variant reached, renamed or destroyed the key-value data).",
    ops: [
      { op: "sql", query: "CREATE TABLE _CF_x (a)" },
      { op: "sql", query: "CREATE TABLE mine (a); ALTER TABLE mine RENAME TO _cf_mine" },
    ],
    subjectExpected: { results: [notAuthorized, notAuthorized] },
  },
  {
    id: "key-size-limit",
    reason: LIMITS_REASON,
    ops: [
      { op: "put", key: longKey, value: 1 },
      { op: "get", key: longKey },
      { op: "delete", key: longKey },
      { op: "put", key: "k".repeat(2048), value: 1 },
    ],
    subjectExpected: { sameAs: "cache" },
  },
  {
    id: "key-size-limit-get-many",
    reason:
      `${LIMITS_REASON} Even ActorCache skips the key-size check in get(array) (it answers an empty Map, ` +
      "contrary to workerd-semantics.md); the storage interface applies the key limit to every key-taking call, so " +
      "ObjectStorage rejects here and matches no workerd backend.",
    ops: [{ op: "getMany", keys: ["a", longKey] }],
    subjectExpected: {
      results: [
        {
          ok: false,
          error: {
            name: "RangeError",
            message: "Keys cannot be larger than 2048 bytes. A key of size 2049 was provided.",
          },
        },
      ],
    },
  },
  {
    id: "key-size-limit-multibyte",
    reason: `${LIMITS_REASON} The size counts UTF-8 bytes: 1025 × "é" is only 1025 UTF-16 code units but 2050 bytes.`,
    ops: [{ op: "put", key: "é".repeat(1025), value: 1 }],
    subjectExpected: { sameAs: "cache" },
  },
  {
    id: "value-size-limit",
    reason: `${LIMITS_REASON} The size is that of the serialized value (V8 format on the platform).`,
    ops: [
      { op: "put", key: "big", value: "x".repeat(131_200) },
      { op: "get", key: "big" },
      { op: "put", key: "fits", value: "x".repeat(131_000) },
    ],
    subjectExpected: { sameAs: "cache" },
  },
  {
    id: "get-key-count",
    reason: LIMITS_REASON,
    ops: [{ op: "getMany", keys: manyKeys }],
    subjectExpected: { sameAs: "cache" },
  },
  {
    id: "put-delete-key-count",
    reason:
      `${LIMITS_REASON} Even ActorCache checks the count only in get(array); the storage interface asks for the 128-key ` +
      "limit on multi-key put and delete as well, so here ObjectStorage matches no workerd backend.",
    ops: [
      { op: "putMany", entries: manyKeys.map((k): readonly [string, number] => [k, 1]) },
      { op: "deleteMany", keys: manyKeys },
    ],
    subjectExpected: { results: [tooMany(129), tooMany(129)] },
  },
];

/** Where the reference (Miniflare's bundled workerd) is older than the platform's current behaviour. */
export interface ReferenceLag {
  readonly id: string;
  /** What the platform does now, what the reference does, and which test checks both. */
  readonly reason: string;
}

/**
 * Behaviours ObjectStorage takes from the platform's current workerd source where the workerd that
 * Miniflare bundles (v1.20260426) still behaves the older way. The differential tests named in each
 * reason assert the reference's old behaviour and ours, so the day the reference catches up the
 * test turns red and the entry goes.
 */
export const REFERENCE_LAGS: readonly ReferenceLag[] = [
  {
    id: "bcw-depth-cap",
    reason:
      "The platform refuses a blockConcurrencyWhile() nested deeper than 64 (the outermost is 1) with " +
      "`Error: blockConcurrencyWhile() calls are nested too deeply.`; the call rejects and nothing else happens. " +
      'The reference nests without limit. surface.differential.test.ts ("nested blockConcurrencyWhile") checks both.',
  },
];
