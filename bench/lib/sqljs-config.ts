/**
 * The options every benchmark that loads sql.js itself passes to `initSqlJs()`: sql.js initializes
 * one module per process and the first call's options win, so a peer loading it with the defaults
 * first would give actorstore's connections sql.js's legacy extension functions too (docs/sql.md,
 * Known differences), and both would run functions the platform does not have.
 */
export const SQLJS_NATIVE_FUNCTIONS: object = { useOldExtensionFunctions: false };
