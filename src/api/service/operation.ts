/**
 * The one shape every operation of the service has: the state it owns and the request in, the
 * next state and the response out. Pure: no I/O, no clock, no randomness except through the
 * request's `nowMs` and `newId`, so a server, a test and a worker can all drive the same table.
 */
import type { ApiResponse } from "../envelope";
import type { IdGenerator } from "../ids";

/** A request as operations see it: already routed, authenticated and parsed. */
export interface ApiRequest {
  /** Upper-case HTTP method. */
  readonly method: string;
  /** The path below the API root, e.g. `/zones/023e…/filters`. */
  readonly path: string;
  /** Path parameters by name (`zone_id`, `filter_id`, …). */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The parsed JSON body, or `undefined` when the request has none. */
  readonly body: unknown;
  /** The time of the request, in ms since the epoch. */
  readonly nowMs: number;
  /** Where new ids come from. */
  readonly newId: IdGenerator;
}

/** The next state and the response to send. */
export interface Outcome<S> {
  readonly state: S;
  readonly response: ApiResponse<unknown>;
}

/** An operation over a state of type `S`. */
export type Operation<S> = (state: S, request: ApiRequest) => Outcome<S>;

/**
 * Wraps a read-only handler as an operation that keeps its state.
 *
 * @example
 * ```ts
 * const getZone: Operation<ZoneRecord> = reading((zone) => ok(zone.zone));
 * ```
 */
export function reading<S>(read: (state: S, request: ApiRequest) => ApiResponse<unknown>): Operation<S> {
  return (state, request) => ({ state, response: read(state, request) });
}
