/**
 * actorstore/cluster: object hosts on several processes or machines that share a store, with no
 * coordinator: membership in a shared directory, ownership by rendezvous hashing, forwarding over
 * HTTP. Node only (it serves HTTP). See docs/hosting.md.
 *
 * @packageDocumentation
 */
export type { ClusterHostOptions } from "./cluster-host";
export { ClusterHost } from "./cluster-host";
export type { DirectoryMembershipOptions, Member } from "./membership";
export { DirectoryMembership } from "./membership";
export { rendezvousOwner, rendezvousRank } from "./rendezvous";
