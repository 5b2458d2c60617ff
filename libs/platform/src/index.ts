export { ConfigError, EnvReader, loadConfigOrExit } from './config';
export { createLogger, PinoNestLogger } from './logger';
export type { Logger } from './logger';
export { checkReadiness, startHealthServer } from './health';
export type { HealthReport, ReadinessCheck } from './health';
export { startEmbeddedPostgres } from './embedded-postgres';
export type { EmbeddedDatabase } from './embedded-postgres';
export { newRequestId, newToken, recordId, secretsEqual, sha256Hex } from './ids';
export { guardedLookup, SsrfError, SsrfGuard } from './ssrf';
