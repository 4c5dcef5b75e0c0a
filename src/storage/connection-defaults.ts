/**
 * Connection settings. SQLite keeps some settings per connection, not in the database file, so a
 * new session of an object (after a restart, a reset, a restore) starts from the platform's
 * defaults, whatever the previous session set. Foreign keys are on, as on the platform.
 *
 * Replay must see the same boundaries: the first commit of every session carries these
 * statements ahead of its own SQL, so a log that spans several sessions replays each with the
 * settings it really had.
 */
import type { SqlEngine } from "../engine/engine";

/** The statements that put a connection into its default state. */
export const CONNECTION_DEFAULTS: readonly string[] = [
  "PRAGMA foreign_keys = ON",
  "PRAGMA defer_foreign_keys = OFF",
  "PRAGMA case_sensitive_like = OFF",
  "PRAGMA ignore_check_constraints = OFF",
  "PRAGMA legacy_alter_table = OFF",
  "PRAGMA recursive_triggers = OFF",
  "PRAGMA reverse_unordered_selects = OFF",
];

/** Puts `engine`'s connection into the default state. */
export function applyConnectionDefaults(engine: SqlEngine): void {
  engine.exec(`${CONNECTION_DEFAULTS.join(";\n")};`);
}
