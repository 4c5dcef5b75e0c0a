/**
 * The managed-rules migration as pure functions over a zone's state.
 *
 * @packageDocumentation
 */
export type { CheckCompatibilityOptions, CompatibilityResult, IneligibilityReason } from "./compatibility";
export { checkCompatibility, findIneligibility } from "./compatibility";
export type { EntryPointUpdate, UpdateEntryPointQuery, WafMigrationMode } from "./entry-point";
export {
  isWafMigrationMode,
  parsePhaseTwo,
  parseWafMigrationMode,
  updateEntryPoint,
  WAF_MIGRATION_MODES,
} from "./entry-point";
export { checkMigrationLimits, MAX_MIGRATED_EXPRESSION_BYTES, MAX_MIGRATED_FIREWALL_RULES } from "./limits";
export { MANAGED_RULESET_IDS, OWASP_ANOMALY_RULE_ID } from "./managed-rulesets";
export type { MigrationConfigResult, NotMigratedKind, NotMigratedSetting } from "./migration-config";
export { getMigrationConfig, NOT_MIGRATED_KINDS, pageRuleExpression } from "./migration-config";
export { createUriOverride, deleteUriOverride } from "./overrides";
export type { PreviousWafSettingsPatch } from "./previous-settings";
export { PREVIOUS_API_GONE_MESSAGE, updatePreviousWafSettings } from "./previous-settings";
export type { ApiMessage, OperationResult, StepOutcome, StepStatus } from "./result";
export { isStepStatus, MIGRATION_ERROR_CODES, MIGRATION_NOTE_CODE, STEP_STATUSES } from "./result";
export type {
  CategoryOverride,
  EntryPointRuleset,
  ExecuteOverrides,
  ExecuteParameters,
  RuleAction,
  RuleOverride,
  RuleRatelimit,
  RulesetBodyValidation,
  RulesetPhase,
  RulesetRule,
  SkipParameters,
  ValidateRulesetBodyOptions,
} from "./ruleset-body";
export {
  checkRuleExpression,
  isRuleAction,
  isRulesetPhase,
  MANAGED_PHASE,
  MAX_RULE_EXPRESSION_LENGTH,
  RULE_ACTIONS,
  RULESET_PHASES,
  validateRulesetBody,
} from "./ruleset-body";
export type { RulesetResource, RulesetResourceValidation } from "./ruleset-resource";
export { rulesetResourceFromZone, validateRulesetResource, validateRulesetResources } from "./ruleset-resource";
export type { ParanoiaLevel, ScoreThresholdLevel, SensitivityMapping } from "./sensitivity";
export {
  mapActionMode,
  mapSensitivity,
  PARANOIA_LEVELS,
  paranoiaCategoriesToDisable,
  SCORE_THRESHOLD_LEVELS,
  SCORE_THRESHOLDS,
  SENSITIVITY_MAPPING,
} from "./sensitivity";
export type { MigrationStatus, WafStatus } from "./status";
export { getMigrationStatus, isWafStatus, WAF_STATUSES } from "./status";
export type {
  BypassProduct,
  CreateZoneStateOptions,
  FirewallRuleState,
  MigrationState,
  PageRuleState,
  PageRuleWafSetting,
  Plan,
  PreviousWafConfig,
  PreviousWafOverride,
  UriOverride,
  WafActionMode,
  WafSensitivity,
  ZoneState,
  ZoneStateValidation,
} from "./zone-state";
export {
  BYPASS_PRODUCTS,
  bypassesManagedRules,
  createZoneState,
  isBypassProduct,
  isMigrationState,
  isPageRuleWafSetting,
  isPlan,
  isWafActionMode,
  isWafSensitivity,
  MIGRATION_STATES,
  PAGE_RULE_WAF_SETTINGS,
  PLANS,
  validateZoneState,
  WAF_ACTION_MODES,
  WAF_SENSITIVITIES,
} from "./zone-state";
