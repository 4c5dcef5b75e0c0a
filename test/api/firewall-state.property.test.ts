import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FirewallState } from "../../src/api/filters";
import { createFilters, deleteFilter, EMPTY_FIREWALL_STATE, updateFilter } from "../../src/api/filters";
import { createFirewallRules, DEFAULT_FIREWALL_LIMITS, deleteFirewallRule } from "../../src/api/firewall-rules";
import { isHexId, sequentialHexIds } from "../../src/api/ids";

// A small pool of valid and invalid expressions, so duplicates and parse failures both happen often.
const EXPRESSIONS = ["ip.src eq 1.2.3.4", "ip.src eq 5.6.7.8", 'http.request.uri.path contains "/login"', "foo eq 1"];

type Op =
  | { kind: "createFilter"; e: number }
  | { kind: "oneCall"; e: number; maxRules: number }
  | { kind: "byReference"; pick: number }
  | { kind: "updateFilter"; pick: number; e: number }
  | { kind: "deleteFilter"; pick: number }
  | { kind: "deleteRule"; pick: number; dropFilter: boolean };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("createFilter" as const), e: fc.nat(3) }),
  fc.record({ kind: fc.constant("oneCall" as const), e: fc.nat(3), maxRules: fc.integer({ min: 0, max: 4 }) }),
  fc.record({ kind: fc.constant("byReference" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("updateFilter" as const), pick: fc.nat(), e: fc.nat(3) }),
  fc.record({ kind: fc.constant("deleteFilter" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("deleteRule" as const), pick: fc.nat(), dropFilter: fc.boolean() }),
);

function pickId(ids: readonly string[], n: number): string {
  return ids.length === 0 ? "f".repeat(32) : (ids[n % ids.length] as string);
}

function checkInvariants(state: FirewallState): void {
  const filterIds = state.filters.map((f) => f.id);
  const all = [...filterIds, ...state.rules.map((r) => r.id)];
  expect(new Set(all).size).toBe(all.length);
  for (const id of all) expect(isHexId(id)).toBe(true);
  // Filters cannot be deleted while used, so every rule's filter exists.
  for (const r of state.rules) expect(filterIds).toContain(r.filterId);
  for (const id of state.ruleOwnedFilterIds) expect(filterIds).toContain(id);
  const expressions = state.filters.map((f) => f.expression.trim());
  expect(new Set(expressions).size).toBe(expressions.length);
}

describe("firewall state machine", () => {
  it("filters and rules: invariants hold and failed operations leave the state untouched (property)", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 25 }), (ops) => {
        let state = EMPTY_FIREWALL_STATE;
        const idGenerator = sequentialHexIds();
        for (const o of ops) {
          const before = state;
          let next: { state: FirewallState; response: { status: number } };
          switch (o.kind) {
            case "createFilter":
              next = createFilters(state, [{ expression: EXPRESSIONS[o.e] }], { idGenerator });
              break;
            case "oneCall":
              next = createFirewallRules(state, [{ filter: { expression: EXPRESSIONS[o.e] }, action: "block" }], {
                idGenerator,
                limits: { ...DEFAULT_FIREWALL_LIMITS, maxRules: o.maxRules },
              });
              break;
            case "byReference":
              next = createFirewallRules(
                state,
                [
                  {
                    filter: {
                      id: pickId(
                        state.filters.map((f) => f.id),
                        o.pick,
                      ),
                    },
                    action: "challenge",
                  },
                ],
                { idGenerator },
              );
              break;
            case "updateFilter":
              next = updateFilter(
                state,
                pickId(
                  state.filters.map((f) => f.id),
                  o.pick,
                ),
                { expression: EXPRESSIONS[o.e] },
              );
              break;
            case "deleteFilter":
              next = deleteFilter(
                state,
                pickId(
                  state.filters.map((f) => f.id),
                  o.pick,
                ),
              );
              break;
            case "deleteRule":
              next = deleteFirewallRule(
                state,
                pickId(
                  state.rules.map((r) => r.id),
                  o.pick,
                ),
                {
                  delete_filter_if_unused: o.dropFilter,
                },
              );
              break;
          }
          // Only the quota/feature refusal of the one-call flow may change state while failing,
          // and then only by adding filters.
          if (next.response.status !== 200) {
            if (o.kind === "oneCall" && next.state !== before) {
              expect(next.state.rules).toEqual(before.rules);
              expect(next.state.filters.length).toBe(before.filters.length + 1);
            } else {
              expect(next.state).toBe(before);
            }
          }
          state = next.state;
          checkInvariants(state);
        }
      }),
      { numRuns: 200 },
    );
  });
});
