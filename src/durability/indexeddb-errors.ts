/**
 * What the IndexedDB adapter (indexeddb-persistence.ts) says when the browser refuses one of its
 * transactions. IndexedDB reports a `DOMException` whose name is the reason and whose message may
 * be empty: Chromium's `QuotaExceededError` has no message at all, so a message built from
 * `error.message` alone said "failed ()".
 */

/**
 * What a full origin quota asks of the user: the adapter keeps the whole retention window of
 * snapshots (it does not thin them), so a shorter window frees space too.
 */
const QUOTA_ADVICE =
  "the browser's storage quota for this origin is used up (navigator.storage.estimate() tells usage and quota): delete data the origin no longer needs, keep less history with a shorter retentionMs, or ask the browser for more with navigator.storage.persist()";

/**
 * An error IndexedDB reported, as a message shows it: its name and text (`"QuotaExceededError"`
 * when it has no text), and for a full quota what to do about it. @internal
 */
export function describeIndexedDbError(error: unknown): string {
  const { name, message } = (typeof error === "object" && error !== null ? error : {}) as {
    name?: unknown;
    message?: unknown;
  };
  const label = typeof name === "string" && name !== "" && name !== "Error" ? name : "";
  const text = typeof message === "string" ? message.trim() : typeof error === "string" ? error : "";
  const said = label === "" ? text || "unknown error" : text === "" ? label : `${label}: ${text}`;
  return label === "QuotaExceededError" ? `${said}: ${QUOTA_ADVICE}` : said;
}
