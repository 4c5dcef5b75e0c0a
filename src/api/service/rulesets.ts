/**
 * Rulesets as the rulesets API returns them: an `id`, `name`, `kind`, `phase`, a `version` that
 * grows on every update, `last_updated`, and rules that each carry a 32-hex `id`, a `version` and
 * `last_updated` (the published schema's `rulesets_Ruleset` and `rulesets_Rule`, which the SDK's
 * `rulesets.phases.get`/`update` types require).
 */
import type { IdGenerator } from "../ids";
import { formatMicrosecondTimestamp } from "../ids";
import type { EntryPointRuleset, RulesetRule } from "../waf-migration/ruleset-body";

/** A rule of a stored ruleset: the body's rule plus the fields the service assigns. */
export interface StoredRulesetRule extends RulesetRule {
  readonly id: string;
  readonly version: string;
  readonly ref: string;
  readonly description: string;
  readonly last_updated: string;
}

/** A ruleset as the API returns it. */
export interface Ruleset {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly kind: "managed" | "custom" | "root" | "zone";
  readonly phase: string;
  readonly version: string;
  readonly last_updated: string;
  readonly rules: readonly StoredRulesetRule[];
}

/** What a save needs besides the body: the clock and where new ids come from. */
export interface RulesetSaveContext {
  readonly nowMs: number;
  readonly newId: IdGenerator;
}

const ASSIGNED = new Set(["id", "version", "last_updated"]);

/** A canonical text of what the client controls in a rule (keys sorted, assigned fields left out). */
function content(value: unknown, top = false): string {
  if (Array.isArray(value)) return `[${value.map((v) => content(v)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([k, v]) => v !== undefined && !(top && ASSIGNED.has(k)))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${content(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function sameRule(a: RulesetRule, b: RulesetRule): boolean {
  return content(a, true) === content(b, true);
}

function nextVersion(version: string | undefined): string {
  return version === undefined ? "1" : String(Number(version) + 1);
}

/**
 * Saves `body` as the new content of a phase's entry-point ruleset. The ruleset keeps its id and its
 * version grows by one; a rule keeps its id (and its version, when unchanged) when the body names
 * it, and a rule without an id gets a new 32-hex id at version 1.
 *
 * @example
 * ```ts
 * const first = saveRuleset(undefined, { rules: [rule] }, "http_request_firewall_managed", ctx);
 * const second = saveRuleset(first, { rules: first.rules }, "http_request_firewall_managed", ctx);
 * second.version; // "2"
 * ```
 */
export function saveRuleset(
  previous: Ruleset | undefined,
  body: EntryPointRuleset,
  phase: string,
  context: RulesetSaveContext,
): Ruleset {
  const now = formatMicrosecondTimestamp(context.nowMs);
  const before = new Map((previous?.rules ?? []).map((r) => [r.id, r]));
  const taken = new Set(before.keys());
  const rules = body.rules.map((rule): StoredRulesetRule => {
    const old = rule.id === undefined ? undefined : before.get(rule.id);
    let id = rule.id;
    if (id === undefined) {
      do id = context.newId();
      while (taken.has(id));
    }
    taken.add(id);
    const unchanged = old !== undefined && sameRule(old, rule);
    return {
      ...rule,
      id,
      ref: rule.ref ?? old?.ref ?? id,
      description: rule.description ?? "",
      version: unchanged ? old.version : nextVersion(old?.version),
      last_updated: unchanged ? old.last_updated : now,
    };
  });
  return {
    id: previous?.id ?? context.newId(),
    name: body.name ?? previous?.name ?? "default",
    description: body.description ?? previous?.description ?? "",
    kind: "zone",
    phase,
    version: nextVersion(previous?.version),
    last_updated: now,
    rules,
  };
}
