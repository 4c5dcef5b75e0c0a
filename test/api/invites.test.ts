import { describe, expect, it } from "vitest";
import type { Invite } from "../../src/api/invites";
import { respondToInvite, validateInviteId, validateInvitePatch } from "../../src/api/invites";

describe("validateInvitePatch", () => {
  it.each([["accepted"], ["rejected"]])("validateInvitePatch: accepts status %s", (status) => {
    expect(validateInvitePatch({ status })).toEqual({ ok: true, value: { status } });
  });
  it.each([
    ["no body", undefined, ""],
    ["an array", [{ status: "accepted" }], ""],
    ["status missing", {}, "status"],
    ["status pending", { status: "pending" }, "status"],
    ["status expired", { status: "expired" }, "status"],
    ["status upper case", { status: "ACCEPTED" }, "status"],
    ["an extra key", { status: "accepted", role: "admin" }, "role"],
  ])("validateInvitePatch: rejects %s", (_n, body, path) => {
    const v = validateInvitePatch(body);
    expect(v.ok === false && v.errors.map((e) => e.path)).toEqual([path]);
  });
  it.each([
    ["4f5f0c14a2a41d5063dd301b2f829f04", true],
    ["a".repeat(33), false],
    ["", false],
  ])("validateInviteId: %s → %s", (id, expected) => {
    expect(validateInviteId(id).ok).toBe(expected);
  });
});

describe("respondToInvite", () => {
  const invite: Invite = { id: "4f5f0c14a2a41d5063dd301b2f829f04", status: "pending", organization_name: "Org" };
  it("respondToInvite: a pending invitation takes the answer", () => {
    const r = respondToInvite(invite, { status: "accepted" });
    expect(r.invite.status).toBe("accepted");
    expect(r.response.body).toEqual({
      result: { ...invite, status: "accepted" },
      success: true,
      errors: [],
      messages: [],
    });
  });
  it.each(["accepted", "rejected", "expired"] as const)(
    "respondToInvite: a %s invitation cannot be answered again",
    (status) => {
      const r = respondToInvite({ ...invite, status }, { status: "rejected" });
      expect(r.invite.status).toBe(status);
      expect(r.response.status).toBe(400);
    },
  );
  it("respondToInvite: a bad body leaves the invitation unchanged", () => {
    const r = respondToInvite(invite, { status: "maybe" });
    expect(r.invite).toBe(invite);
    expect(r.response.body.success).toBe(false);
  });
});
