/**
 * Per-step results for the migration operations (STYLE example 8): every operation reports
 * what it did step by step and never throws halfway.
 */
import type { ZoneState } from "./zone-state";

/** The outcomes a step can have, as a closed list so tests and callers can switch on them. */
export const STEP_STATUSES = ["changed", "unchanged", "refused", "not_executed"] as const;

/** One of {@link STEP_STATUSES}. */
export type StepStatus = (typeof STEP_STATUSES)[number];

/**
 * Tells whether a value is one of {@link STEP_STATUSES}.
 *
 * @example
 * ```ts
 * isStepStatus("refused"); // true
 * ```
 */
export function isStepStatus(value: unknown): value is StepStatus {
  return typeof value === "string" && (STEP_STATUSES as readonly string[]).includes(value);
}

/**
 * An error or message element as the v4 envelope carries it. `code` is present only where the
 * real API's code is known (the rulesets service makes it optional); `source.pointer` is a JSON
 * pointer into the request body.
 *
 * @example
 * ```ts
 * const e: ApiMessage = { code: 20125, message: "'' is not a valid value for expression because the expression cannot be blank" };
 * ```
 */
export interface ApiMessage {
  code?: number;
  message: string;
  source?: { pointer: string };
}

/**
 * What one step of an operation did.
 *
 * @example
 * ```ts
 * const s: StepOutcome = { step: "check-plan", status: "refused", message: "Validation mode is available to Enterprise zones only." };
 * ```
 */
export interface StepOutcome {
  step: string;
  status: StepStatus;
  message: string;
  errors?: ApiMessage[];
}

/**
 * The result of an operation over a zone: the envelope fields (`success`, `result`, `errors`,
 * `messages`), the zone after the operation (the input object is never mutated; on refusal this
 * is the input unchanged), and the per-step outcomes.
 *
 * @example
 * ```ts
 * const r = getMigrationStatus(zone);
 * if (r.success) console.log(r.result.migration_state);
 * ```
 */
export type OperationResult<T> =
  | { success: true; result: T; errors: []; messages: ApiMessage[]; zone: ZoneState; steps: StepOutcome[] }
  | {
      success: false;
      result: null;
      errors: ApiMessage[];
      messages: ApiMessage[];
      zone: ZoneState;
      steps: StepOutcome[];
    };

/**
 * The code each refusing step puts on the errors it reports, so every message of the migration
 * carries a `code` as the v4 envelope's schema requires (`code` integer, at least 1000). The
 * platform's own codes for these refusals are not published; these are this library's, in a range
 * the known platform codes do not use, and listed in docs/api.md. Errors that already carry the
 * platform's code (e.g. 20125 for a blank expression) keep it.
 */
export const MIGRATION_ERROR_CODES: Readonly<Record<string, number>> = {
  "validate-zone": 10400,
  "parse-query": 10401,
  "check-state": 10402,
  "check-plan": 10403,
  "check-compatibility": 10404,
  "check-limits": 10405,
  "validate-body": 10406,
  "validate-override": 10407,
  "validate-patch": 10408,
  "validate-resource": 10409,
};
/** The code of an informational message (a compatibility finding). */
export const MIGRATION_NOTE_CODE = 10410;
const OTHER_MIGRATION_ERROR_CODE = 10411;

function withCode(message: ApiMessage, code: number): ApiMessage {
  return message.code === undefined ? { ...message, code } : message;
}

/**
 * Collects step outcomes and turns them into an {@link OperationResult}. Internal helper shared by
 * the operations of this folder.
 *
 * @example
 * ```ts
 * const log = new StepLog();
 * log.add("check-state", "unchanged", "The zone has not migrated yet.");
 * return log.succeed(result, zone);
 * ```
 */
export class StepLog {
  readonly #steps: StepOutcome[] = [];
  readonly #messages: ApiMessage[] = [];

  /** Records a step outcome. */
  add(step: string, status: StepStatus, message: string, errors?: ApiMessage[]): this {
    this.#steps.push(
      errors === undefined || errors.length === 0 ? { step, status, message } : { step, status, message, errors },
    );
    return this;
  }

  /** Records an informational message for the envelope's `messages`. */
  note(message: ApiMessage): this {
    this.#messages.push(withCode(message, MIGRATION_NOTE_CODE));
    return this;
  }

  /** Records the steps that did not run because an earlier one refused. */
  skip(steps: readonly string[]): this {
    for (const step of steps) this.add(step, "not_executed", "Not run because an earlier step refused.");
    return this;
  }

  /** Ends the operation successfully. */
  succeed<T>(result: T, zone: ZoneState): OperationResult<T> {
    return { success: true, result, errors: [], messages: [...this.#messages], zone, steps: [...this.#steps] };
  }

  /** Ends the operation with a refusal: records the refusing step and returns the zone unchanged. */
  refuse<T>(
    step: string,
    message: string,
    errors: ApiMessage[],
    zone: ZoneState,
    notRun: readonly string[] = [],
  ): OperationResult<T> {
    const code = MIGRATION_ERROR_CODES[step] ?? OTHER_MIGRATION_ERROR_CODE;
    const errs = (errors.length > 0 ? errors : [{ message }]).map((e) => withCode(e, code));
    this.add(step, "refused", message, errs);
    this.skip(notRun);
    return { success: false, result: null, errors: errs, messages: [...this.#messages], zone, steps: [...this.#steps] };
  }
}
