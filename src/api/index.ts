/**
 * actorstore/api: the HTTP side of the spec as pure, typed, side-effect-free functions.
 * Nothing here imports storage code.
 *
 * @packageDocumentation
 */
export * from "./rules-language/index";
export * from "./waf-migration/index";
