export { ConfigError, EnvReader, loadConfigOrExit } from './config';
export { createLogger, LOG_FORMATS, PinoNestLogger, redactUrl, serializeError, serviceLogger } from './logger';
export type { LogFormat, LoggerOptions } from './logger';
export type { Logger } from './logger';
export { checkReadiness, livenessReport, startHealthServer } from './health';
export type { HealthReport, ReadinessCheck } from './health';
export { startEmbeddedPostgres } from './embedded-postgres';
export type { EmbeddedDatabase } from './embedded-postgres';
export { newRequestId, newToken, recordId, secretsEqual, sha256Hex } from './ids';
export { guardedConnector, guardedLookup, SsrfError, SsrfGuard } from './ssrf';
export { ffmpegPath, toMp3, toOpusVoiceNote, transcode } from './ffmpeg';
export { dropSignalSessionDumps } from './libsignal-console';
export { LoopWaker } from './loop-waker';
export { forEachAtMost } from './at-most';
export { busOp, configureMetrics, GatewayMetrics, INSTANCE_STATUSES, metrics, readMetricsConfig, webhookOutcome } from './metrics';
export type { MetricsConfig, MetricsOptions, MetricsSources, SendOutcome } from './metrics';
export { buildInfo } from './version';
export type { BuildInfo } from './version';
export {
  activeTraceFields,
  activeTraceparent,
  contextOfTraceparent,
  extractTraceContext,
  failSpan,
  flushTraces,
  injectTraceHeaders,
  inSpan,
  outsideTraces,
  readTracingConfig,
  SpanKind,
  startSpan,
  startTracing,
  stopTracing,
  traceparentOf,
  tracingEnabled,
  withSpan,
  withTraceHeaders,
} from './tracing';
export type { Context, Span, SpanOptions, TraceCarrier, TracedService, TracingConfig } from './tracing';
