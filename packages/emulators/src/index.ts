export { type SubmitConsentOptions, submitConsent } from './core/consent-client.js';
export type { CountersSnapshot, GrantCounts } from './core/counters.js';
export type { FaultSpec } from './core/faults.js';
export type { EmulatorControl, IssuedToken, IssueTokenOptions, OAuthSnapshots } from './core/host.js';
export { EMULATOR_KEYS, emulatorLoaders, isEmulatorKey } from './core/modules.js';
export type { AuthorizationCode, OAuthSnapshot, OAuthStore } from './core/oauth-store.js';
export { type EmulatorsPluginOptions, emulatorsPlugin } from './core/plugin.js';
export { type RunningEmulators, type StartEmulatorsOptions, startEmulators } from './core/start.js';
export type * from './core/types.js';
export {
  createDefinitionsEmulator,
  DefinitionError,
  type DefinitionsState,
  definitionUsers,
  instanceOrigin,
  type KeyRecord,
  type PlayedDefinition,
  readDefinition,
} from './providers/definitions/index.js';
