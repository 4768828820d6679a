export { type Config, ConfigError, loadConfig } from './config.js';
export { ERROR_CODES, type ErrorCode, Problem } from './errors/problem.js';
export { createGateway, type Gateway } from './gateway.js';
export { PROVIDERS, type ProviderDefinition, type ProviderKey } from './providers/catalog.js';
