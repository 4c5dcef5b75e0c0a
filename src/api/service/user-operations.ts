/**
 * The operations that are not about one zone: the user's invitations (each an {@link Operation}
 * over the {@link UserRecord}) and `GET /zones`, which reads every zone the credentials can see.
 */
import type { ApiResponse } from "../envelope";
import { ERROR_CODES, fail, invalidRequest, ok } from "../envelope";
import { type Invite, inviteAsOf, respondToInvite, validateInviteId } from "../invites";
import { paginate } from "../listing";
import { matchesZoneQuery, parseZoneListQuery, type Zone } from "../zones";
import type { ApiRequest, Operation } from "./operation";
import { reading } from "./operation";
import type { UserRecord } from "./records";

function inviteNotFound(id: string): ApiResponse<never> {
  return fail(404, {
    code: ERROR_CODES.inviteNotFound,
    message: `Invitation ${id} does not exist; list invitations to find its id.`,
  });
}

/** `GET /user/invites`: a pending invitation past its `expires_on` reads as `expired`. */
export const listInvitesOperation: Operation<UserRecord> = reading((user, request) =>
  ok(user.invites.map((i) => inviteAsOf(i, request.nowMs))),
);

/** `GET /user/invites/{invite_id}`. */
export const getInviteOperation: Operation<UserRecord> = reading((user, request) => {
  const id = request.params.invite_id ?? "";
  const invite = user.invites.find((i) => i.id === id);
  return invite === undefined ? inviteNotFound(id) : ok(inviteAsOf(invite, request.nowMs));
});

/**
 * `PATCH /user/invites/{invite_id}`: `{status: accepted|rejected}` answers a pending invitation; one
 * past its `expires_on` is expired and refused like any invitation no longer pending.
 */
export const editInviteOperation: Operation<UserRecord> = (user, request) => {
  const id = request.params.invite_id ?? "";
  const checked = validateInviteId(id);
  if (!checked.ok) return { state: user, response: invalidRequest(checked.errors) };
  const stored = user.invites.find((i) => i.id === id);
  if (stored === undefined) return { state: user, response: inviteNotFound(id) };
  const invite = inviteAsOf(stored, request.nowMs);
  const answered = respondToInvite(invite, request.body);
  if (answered.invite === invite) return { state: user, response: answered.response };
  const invites: Invite[] = user.invites.map((i) => (i.id === id ? answered.invite : i));
  return { state: { invites }, response: answered.response };
};

/** `GET /zones` over every zone the caller sees: filters, order and pages. */
export function listZonesOperation(zones: readonly Zone[], request: ApiRequest): ApiResponse<unknown> {
  const q = parseZoneListQuery(request.query);
  if (!q.ok) return invalidRequest(q.errors);
  const page = paginate(
    zones.filter((z) => matchesZoneQuery(z, q.value)),
    q.value.listing,
  );
  return ok(page.result, { resultInfo: page.result_info });
}
