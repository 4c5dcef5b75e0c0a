/**
 * The names of the storage's own objects (`_cf_KV`, `_cf_METADATA`), which user SQL may not name.
 */

/** Any ASCII-case spelling of the internal prefix (the `i` flag without `u` folds ASCII only). */
const INTERNAL_PREFIX = /^_cf_/i;

/**
 * Whether user SQL may name an object called `name`. SQLite resolves names ignoring ASCII case, so
 * `"_CF_KV"` is the table `_cf_KV`: any spelling of the `_cf_` prefix is internal, as on the
 * platform since it made the check case-insensitive. (No other character case-folds onto `c` or
 * `f` in SQLite, which folds ASCII only.)
 */
export function isAllowedName(name: string): boolean {
  return !INTERNAL_PREFIX.test(name);
}
