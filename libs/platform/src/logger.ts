import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Errors as the log shows them: what failed and where, never the data it failed on. A failed query
 * carries its parameters (a whole instance row, token and API keys included) and Postgres' `detail`
 * (`Key (token)=(…) already exists`); those are dropped, the statement text, the SQLSTATE, the table,
 * column and constraint are kept.
 */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const serialized = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  for (const key of ['parameters', 'driverError', 'detail', 'where', 'internalQuery', 'record', 'entity', 'config', 'request', 'response']) {
    delete serialized[key];
  }
  const cause = (error as { cause?: unknown }).cause;
  if (cause !== undefined) serialized.cause = serializeError(cause);
  return serialized;
}

/** The logger each service's logger was made from, without a `service` binding (see `serviceLogger`). */
const roots = new WeakMap<Logger, Logger>();

/** JSON logs, one object per line with one `service` key; secrets are redacted wherever they appear under these keys. */
export function createLogger(service: string, level = 'info', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: null,
    redact: {
      paths: [
        'token',
        'admintoken',
        '*.token',
        '*.admintoken',
        'openai_apikey',
        '*.openai_apikey',
        'headers.token',
        'headers.admintoken',
        'secret',
        '*.secret',
        'proxyUrl',
        '*.proxyUrl',
      ],
      censor: '[masked]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: serializeError, error: serializeError },
  };
  const root = destination ? pino(options, destination) : pino(options);
  const logger = root.child({ service });
  roots.set(logger, root);
  return logger;
}

/**
 * The logger of another service running in this process (the embedded default): same output and
 * level, its own `service` value instead of a second `service` key (pino writes a child's bindings
 * after its parent's, so `child({ service })` would print the key twice).
 */
export function serviceLogger(logger: Logger, service: string): Logger {
  const root = roots.get(logger);
  if (!root) return logger.child({ service });
  const child = root.child({ service });
  child.level = logger.level;
  roots.set(child, root);
  return child;
}

/** Lets NestJS write through our pino logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    // Nest narrates its boot at "log" level (every route mapped); that is debug detail for us.
    this.logger.debug({ context }, String(message));
  }

  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }

  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }

  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }

  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
