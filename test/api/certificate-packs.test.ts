import { describe, expect, it } from "vitest";
import {
  CERTIFICATE_PACK_STATUSES,
  CERTIFICATE_PACK_TYPES,
  parseCertificatePackListQuery,
  validateCertificate,
  validateCertificatePack,
} from "../../src/api/certificate-packs";

const certificate = {
  id: "7e7b8deba8538af625850b7b2530034c",
  hosts: ["example.com", "*.example.com"],
  issuer: "LetsEncrypt",
  signature: "ECDSAWithSHA256",
  status: "active",
  bundle_method: "ubiquitous",
  zone_id: "023e105f4ecef8ad9ca31a8372d0c353",
  uploaded_on: "2022-12-09T23:11:06.010263Z",
  modified_on: "2022-12-09T23:11:06.010263Z",
  expires_on: "2023-03-09T23:11:06.000000Z",
  priority: null,
};
// The API description's certificate pack (§2.4), field for field.
const pack = {
  id: "3822ff90-ea29-44df-9e55-21300bb9419b",
  type: "universal",
  hosts: ["example.com", "*.example.com"],
  primary_certificate: certificate.id,
  status: "active",
  certificates: [certificate],
  created_on: "2022-12-09T23:11:05.986372Z",
  validity_days: 90,
  validation_method: "txt",
  certificate_authority: "lets_encrypt",
};

describe("validateCertificatePack", () => {
  it.each([
    ["the described pack", pack],
    [
      "a pack with no certificate yet",
      { id: "p", type: "advanced", hosts: ["a.example"], status: "pending_validation", certificates: [] },
    ],
  ])("validateCertificatePack: accepts %s", (_n, value) => {
    expect(validateCertificatePack(value).ok).toBe(true);
  });
  it("validateCertificatePack: accepts every type", () => {
    for (const type of CERTIFICATE_PACK_TYPES) expect(validateCertificatePack({ ...pack, type }).ok).toBe(true);
  });
  it("validateCertificatePack: accepts every status", () => {
    for (const status of CERTIFICATE_PACK_STATUSES) expect(validateCertificatePack({ ...pack, status }).ok).toBe(true);
  });
  it.each([
    ["unknown type", { ...pack, type: "dedicated" }, "type"],
    ["unknown status", { ...pack, status: "done" }, "status"],
    ["validity_days 60", { ...pack, validity_days: 60 }, "validity_days"],
    ["validation_method cname", { ...pack, validation_method: "cname" }, "validation_method"],
    ["certificate_authority comodo", { ...pack, certificate_authority: "comodo" }, "certificate_authority"],
    [
      "certificate_authority digicert (not in the schema)",
      { ...pack, certificate_authority: "digicert" },
      "certificate_authority",
    ],
    ["certificates missing", { ...pack, certificates: undefined, primary_certificate: undefined }, "certificates"],
    ["created_on in milliseconds", { ...pack, created_on: "2022-12-09T23:11:05.986Z" }, "created_on"],
    ["hosts not strings", { ...pack, hosts: [1] }, "hosts"],
    ["primary not among certificates", { ...pack, primary_certificate: "nope" }, "primary_certificate"],
    [
      "a bad certificate inside",
      { ...pack, certificates: [{ ...certificate, bundle_method: "best" }] },
      "certificates[0].bundle_method",
    ],
  ])("validateCertificatePack: rejects %s", (_n, value, path) => {
    const v = validateCertificatePack(value);
    expect(v.ok === false && v.errors.map((e) => e.path)).toEqual([path]);
  });
});

describe("validateCertificate", () => {
  it.each([
    ["the described certificate", certificate],
    ["a free-string status", { ...certificate, status: "whatever_the_platform_says" }],
    ["a numeric priority", { ...certificate, priority: 1 }],
    ["geo restrictions", { ...certificate, geo_restrictions: { label: "eu" } }],
  ])("validateCertificate: accepts %s", (_n, value) => {
    expect(validateCertificate(value).ok).toBe(true);
  });
  it.each([
    ["missing hosts", { ...certificate, hosts: undefined }, "hosts"],
    ["missing status", { ...certificate, status: undefined }, "status"],
    ["expires_on with an offset", { ...certificate, expires_on: "2023-03-09T23:11:06.000000+00:00" }, "expires_on"],
    ["uploaded_on without Z", { ...certificate, uploaded_on: "2022-12-09T23:11:06.010263" }, "uploaded_on"],
    ["priority a string", { ...certificate, priority: "1" }, "priority"],
    ["unknown geo label", { ...certificate, geo_restrictions: { label: "asia" } }, "geo_restrictions"],
  ])("validateCertificate: rejects %s", (_n, value, path) => {
    const v = validateCertificate(value);
    expect(v.ok === false && v.errors.map((e) => e.path)).toEqual([path]);
  });
});

describe("parseCertificatePackListQuery", () => {
  it.each([
    ["", { all: false }],
    ["ssl_status=all", { all: true }],
    ["status=all", { all: true }],
    ["status=all&deploy=staging&per_page=50", { all: true, deploy: "staging" }],
  ])("parseCertificatePackListQuery: accepts %s", (query, expected) => {
    const v = parseCertificatePackListQuery(query);
    expect(v.ok && v.value).toMatchObject(expected);
  });
  it.each([
    ["ssl_status=active", "ssl_status"],
    ["status=pending", "status"],
    ["deploy=prod", "deploy"],
    ["per_page=500", "per_page"],
  ])("parseCertificatePackListQuery: rejects %s", (query, path) => {
    const v = parseCertificatePackListQuery(query);
    expect(v.ok === false && v.errors.map((e) => e.path)).toEqual([path]);
  });
});
