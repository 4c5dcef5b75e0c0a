/**
 * Connection settings. SQLite keeps some settings per connection, not in the database file, so a
 * new session of an object (after a restart, a reset, a restore) starts from the platform's
 * defaults, whatever the previous session set. Foreign keys are on, as on the platform.
 *
 * Replay must run every write with the settings it really ran with, and neither a fresh connection
 * nor a snapshot image has them. So the log says where they come from (`SessionMark`): the first
 * record of a session starts from the defaults, the first record after a snapshot carries the
 * settings in force when the snapshot was taken, and a rolled-back savepoint that changed a
 * setting (which a rollback does not undo) is followed by an entry that sets them.
 */
import { CONNECTION_SETTING_NAMES, type ConnectionSetting, type ConnectionSettings } from "../durability/commit-record";
import { PLATFORM_REAL_TEXT_DIGITS, type SqlEngine } from "../engine/engine";
import { registerPragmaArgumentGuard } from "./sql/pragma-arguments";

/** The settings of a new connection (the platform's defaults). */
export const DEFAULT_CONNECTION_SETTINGS: Readonly<ConnectionSettings> = Object.freeze({
  foreign_keys: true,
  defer_foreign_keys: false,
  case_sensitive_like: false,
  ignore_check_constraints: false,
  legacy_alter_table: false,
  recursive_triggers: false,
  reverse_unordered_selects: false,
});

/**
 * Puts `engine`'s connection into the default state, with the functions logged SQL may call (the
 * run-time check of pragma arguments, so that replay checks as the live run did, and
 * `load_extension`, see {@link registerLoadExtension}), and the platform's digits for a REAL
 * turned into text.
 */
export function applyConnectionDefaults(engine: SqlEngine): void {
  registerPragmaArgumentGuard(engine);
  registerLoadExtension(engine);
  engine.setRealTextDigits(PLATFORM_REAL_TEXT_DIGITS);
  applyConnectionSettings(engine, DEFAULT_CONNECTION_SETTINGS);
}

/**
 * Sets every connection setting. `foreign_keys` cannot change inside a transaction (SQLite
 * ignores it there, live and in replay alike), so the caller applies a change of it outside one.
 */
export function applyConnectionSettings(engine: SqlEngine, settings: Readonly<ConnectionSettings>): void {
  engine.exec(
    `${CONNECTION_SETTING_NAMES.map((name) => `PRAGMA ${name} = ${settings[name] ? "ON" : "OFF"}`).join(";\n")};`,
  );
}

/** Reads the connection's settings. */
export function readConnectionSettings(engine: SqlEngine): ConnectionSettings {
  const settings = {} as ConnectionSettings;
  for (const name of CONNECTION_SETTING_NAMES) settings[name] = readSetting(engine, name);
  return settings;
}

function readSetting(engine: SqlEngine, name: ConnectionSetting): boolean {
  // case_sensitive_like cannot be read back (setting it replaces LIKE); its effect can.
  if (name === "case_sensitive_like") return engine.query("SELECT 'a' LIKE 'A'")[0]?.[0] === 0;
  return engine.query(`PRAGMA ${name}`)[0]?.[0] === 1;
}

/** Whether two sets of settings are the same. */
export function sameSettings(a: Readonly<ConnectionSettings>, b: Readonly<ConnectionSettings>): boolean {
  return CONNECTION_SETTING_NAMES.every((name) => a[name] === b[name]);
}

/**
 * `load_extension(X)` and `load_extension(X, Y)` as the platform's SQLite has them: allowed by its
 * authorizer, failing when called with `not authorized` (extension loading is off), and refused
 * in a view, trigger or other schema expression as an unsafe use. sql.js's SQLite is built
 * without the function, which made every statement naming it fail to compile with `no such
 * function`, also where it is never called.
 */
function registerLoadExtension(engine: SqlEngine): void {
  const refuse = (): never => {
    throw new Error("not authorized");
  };
  engine.createFunction("load_extension", 1, refuse, { directOnly: true });
  engine.createFunction("load_extension", 2, refuse, { directOnly: true });
}
