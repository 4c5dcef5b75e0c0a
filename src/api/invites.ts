/**
 * User invitations (http-models.md §1.5): the invitation model, the `PATCH /user/invites/{id}` body
 * (`status` accepted or rejected), and {@link respondToInvite}, the one transition it allows.
 */
import type { ApiResponse } from "./envelope";
import { ERROR_CODES, fail, invalidRequest, ok } from "./envelope";
import type { Validation, ValidationIssue } from "./validation";
import { isRecord, oneOf } from "./validation";

/** Every status an invitation can be in. */
export const INVITE_STATUSES = ["pending", "accepted", "rejected", "expired"] as const;
/** One of {@link INVITE_STATUSES}. */
export type InviteStatus = (typeof INVITE_STATUSES)[number];
/**
 * True for an invitation status.
 *
 * @example
 * ```ts
 * isInviteStatus("expired"); // true
 * ```
 */
export const isInviteStatus = oneOf(INVITE_STATUSES);

/** The statuses a user may set with PATCH. */
export const INVITE_RESPONSES = ["accepted", "rejected"] as const;
/** One of {@link INVITE_RESPONSES}. */
export type InviteResponse = (typeof INVITE_RESPONSES)[number];
/**
 * True for a status a user may answer with.
 *
 * @example
 * ```ts
 * isInviteResponse("accepted"); // true
 * isInviteResponse("pending"); // false
 * ```
 */
export const isInviteResponse = oneOf(INVITE_RESPONSES);

/** An invitation; fields beyond `id` and `status` are optional as the specification does not show them. */
export interface Invite {
  readonly id: string;
  readonly status: InviteStatus;
  readonly invited_member_id?: string | null;
  readonly organization_id?: string;
  readonly organization_name?: string;
  readonly organization_is_enforcing_twofactor?: boolean;
  readonly invited_by?: string;
  readonly invited_member_email?: string;
  readonly invited_on?: string;
  readonly expires_on?: string;
  readonly roles?: readonly unknown[];
}

/**
 * An invitation as it stands at `nowMs`: a `pending` one whose `expires_on` has passed is `expired`
 * (it can no longer be answered); any other invitation is returned as it is.
 *
 * @example
 * ```ts
 * inviteAsOf({ id: "a", status: "pending", expires_on: "2024-01-08T00:00:00.000000Z" }, Date.UTC(2024, 1, 1)).status;
 * // "expired"
 * ```
 */
export function inviteAsOf(invite: Invite, nowMs: number): Invite {
  if (invite.status !== "pending" || invite.expires_on === undefined) return invite;
  const expires = Date.parse(invite.expires_on);
  return Number.isFinite(expires) && expires <= nowMs ? { ...invite, status: "expired" } : invite;
}

/** The validated PATCH body. */
export interface InvitePatch {
  readonly status: InviteResponse;
}

/**
 * Validates an `{invite_id}` path parameter (at most 32 characters).
 *
 * @example
 * ```ts
 * validateInviteId("4f5f0c14a2a41d5063dd301b2f829f04").ok; // true
 * ```
 */
export function validateInviteId(id: string): Validation<string> {
  if (id.length === 0 || id.length > 32) {
    return {
      ok: false,
      errors: [{ path: "invite_id", message: "invite_id must be an identifier of 1 to 32 characters." }],
    };
  }
  return { ok: true, value: id };
}

/**
 * Validates a `PATCH /user/invites/{id}` body: `status` is required and must be `accepted` or
 * `rejected`; other keys are refused so typos are not silently ignored.
 *
 * @example
 * ```ts
 * validateInvitePatch({ status: "accepted" }); // { ok: true, value: { status: "accepted" } }
 * ```
 */
export function validateInvitePatch(body: unknown): Validation<InvitePatch> {
  if (!isRecord(body))
    return { ok: false, errors: [{ path: "", message: "The body must be an object with a status." }] };
  const issues: ValidationIssue[] = [];
  if (!isInviteResponse(body.status)) {
    issues.push({ path: "status", message: "status is required and must be accepted or rejected." });
  }
  for (const key of Object.keys(body)) {
    if (key !== "status") issues.push({ path: key, message: `${key} is not a field of this request; remove it.` });
  }
  if (issues.length > 0 || !isInviteResponse(body.status)) return { ok: false, errors: issues };
  return { ok: true, value: { status: body.status } };
}

/**
 * Applies a PATCH to an invitation: only a `pending` invitation can be answered. Returns the updated
 * invitation and the response to send.
 *
 * @example
 * ```ts
 * const { invite: next, response } = respondToInvite(invite, { status: "accepted" });
 * ```
 */
export function respondToInvite(
  invite: Invite,
  body: unknown,
): { readonly invite: Invite; readonly response: ApiResponse<Invite> } {
  const patch = validateInvitePatch(body);
  if (!patch.ok) return { invite, response: invalidRequest(patch.errors) };
  if (invite.status !== "pending") {
    return {
      invite,
      response: fail(400, {
        code: ERROR_CODES.inviteNotPending,
        message: `This invitation is ${invite.status} and can no longer be answered; ask for a new one.`,
      }),
    };
  }
  const next: Invite = { ...invite, status: patch.value.status };
  return { invite: next, response: ok(next) };
}
