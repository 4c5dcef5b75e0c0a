import { describe, expect, it } from "vitest";
import { DNS_RECORD_TYPES, isDnsRecordType, parseDnsRecordListQuery } from "../../src/api/dns-records";

describe("parseDnsRecordListQuery", () => {
  it("parseDnsRecordListQuery: defaults to 100 per page ordered by type ascending", () => {
    expect(parseDnsRecordListQuery("")).toEqual({
      ok: true,
      value: { match: "all", tagMatch: "all", listing: { page: 1, per_page: 100, order: "type", direction: "asc" } },
    });
  });
  const accept: [string, string, object][] = [
    [
      "the described per_page and page",
      "per_page=100&page=2",
      { listing: { page: 2, per_page: 100, order: "type", direction: "asc" } },
    ],
    ["type", "type=CNAME", { type: "CNAME" }],
    [
      "name sub-filters",
      "name=www.example.com&name.endswith=.example.com",
      { name: { value: "www.example.com", endswith: ".example.com" } },
    ],
    ["content and proxied", "content=127.0.0.1&proxied=true", { content: { value: "127.0.0.1" }, proxied: true }],
    [
      "content sub-filters (the SDK's content: { exact, contains, startswith, endswith })",
      "content.contains=0.2&content.startswith=192.&content.endswith=.1&content.exact=192.0.2.1",
      { content: { contains: "0.2", startswith: "192.", endswith: ".1", exact: "192.0.2.1" } },
    ],
    ["comment presence", "comment.present=", { comment: { present: true } }],
    ["tag name:value and tag_match", "tag=team:dns&tag_match=any", { tag: { value: "team:dns" }, tagMatch: "any" }],
    ["search and match", "search=www&match=any", { search: "www", match: "any" }],
    [
      "order by ttl desc",
      "order=ttl&direction=DESC",
      { listing: { page: 1, per_page: 100, order: "ttl", direction: "desc" } },
    ],
    [
      "a very large per_page",
      "per_page=5000",
      { listing: { page: 1, per_page: 5000, order: "type", direction: "asc" } },
    ],
  ];
  it.each(accept)("parseDnsRecordListQuery: accepts %s", (_n, query, expected) => {
    const v = parseDnsRecordListQuery(query);
    expect(v.ok, JSON.stringify(v)).toBe(true);
    if (v.ok) expect(v.value).toMatchObject(expected);
  });
  const reject: [string, string, string][] = [
    ["lower-case type", "type=cname", "type"],
    ["unknown type", "type=SPF", "type"],
    ["name too long", `name=${"a".repeat(256)}`, "name"],
    ["name.contains too long", `name.contains=${"a".repeat(256)}`, "name.contains"],
    ["proxied not a boolean", "proxied=yes", "proxied"],
    ["match unknown", "match=none", "match"],
    ["tag_match unknown", "tag_match=none", "tag_match"],
    ["present and absent together", "comment.present=&comment.absent=", "comment.absent"],
    ["tag without a name", "tag=:value", "tag"],
    ["per_page 0", "per_page=0", "per_page"],
    ["order by created_on", "order=created_on", "order"],
    ["repeated type", "type=A&type=AAAA", "type"],
  ];
  it.each(reject)("parseDnsRecordListQuery: rejects %s", (_n, query, path) => {
    const v = parseDnsRecordListQuery(query);
    expect(v.ok === false && v.errors.map((e) => e.path)).toEqual([path]);
  });
  it("isDnsRecordType: knows every listed type", () => {
    for (const t of DNS_RECORD_TYPES) expect(isDnsRecordType(t)).toBe(true);
    expect(isDnsRecordType("ANY")).toBe(false);
  });
});
