/**
 * actorstore/cluster: object hosts on several processes or machines that share a store, with no
 * coordinator: membership in a shared directory or bucket, ownership by rendezvous hashing,
 * forwarding over HTTP, and (over a bucket) one writer per object by the S3 adapter's fencing. Node
 * only (it serves HTTP). See docs/hosting.md.
 *
 * @packageDocumentation
 */

export type { ClusterBucketOptions } from "./bucket";
export { bucketPerObject } from "./bucket";
export type { ClusterHostOptions } from "./cluster-host";
export { ClusterHost } from "./cluster-host";
export type { DirectoryMembershipOptions, Member, MembershipOptions } from "./membership";
export { DirectoryMembership, Membership } from "./membership";
export { rendezvousOwner, rendezvousRank } from "./rendezvous";
