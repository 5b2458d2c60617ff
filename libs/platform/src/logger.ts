import { types } from 'node:util';
import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { activeTraceFields, tracingEnabled } from './tracing';

export type { Logger } from 'pino';

/**
 * Errors as the log shows them: what failed and where, never the data it failed on. A failed query
 * carries its parameters (a whole instance row, token and API keys included) and Postgres' `detail`
 * (`Key (token)=(…) already exists`); those are dropped, the statement text, the SQLSTATE, the table,
 * column and constraint are kept.
 */
export function serializeError(error: unknown): unknown {
  // An error made in another realm (Node's own fetch failing under a VM context, as Jest runs code) is no
  // `instanceof Error` here; left as it is, it logged as `{}` (its fields are not enumerable).
  if (!(error instanceof Error) && !types.isNativeError(error)) return error;
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
  for (const key of ['parameters', 'driverError', 'detail', 'where', 'internalQuery', 'record', 'entity', 'config', 'request', 'response']) {
    delete serialized[key];
  }
  const cause = (error as { cause?: unknown }).cause;
  if (cause !== undefined) serialized.cause = serializeError(cause);
  return serialized;
}

/** Query parameters that carry a credential (`/sse?token=`, `?admintoken=`…), whatever their case. */
const SECRET_QUERY = /([?&;](?:token|admintoken|secret|access_token|api_?key|password)=)[^&#;]*/gi;
/** `/chatwoot/webhook/{instance}/{secret}`: the path segment after the instance is the webhook's credential. */
const SECRET_PATH = /(\/chatwoot\/webhook\/[^/?#]*\/)[^?#]*/i;
/** The password of a URL's user info (`scheme://user:password@host`). */
const USER_INFO = /(\/\/[^/?#@:]*:)[^/?#@]*@/;

/**
 * A URL as a log line may show it: what is a credential in a path, a query or the user info is
 * `[masked]`. Percent-escapes of letters and digits are read first, so `/%63hatwoot/webhook/…` or
 * `?%74oken=` are masked too. Anything but a string is left as it is.
 */
export function redactUrl(url: unknown): unknown {
  if (typeof url !== 'string') return url;
  const plain = url.replace(/%([0-9a-f]{2})/gi, (escape, hex: string) => {
    const character = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9_.~-]/.test(character) ? character : escape;
  });
  return plain.replace(SECRET_PATH, '$1[masked]').replace(SECRET_QUERY, '$1[masked]').replace(USER_INFO, '$1[masked]@');
}

/** The logger each service's logger was made from, without a `service` binding (see `serviceLogger`). */
const roots = new WeakMap<Logger, Logger>();

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerOptions {
  /** `json` (the default): one JSON object per line, for machines; `pretty`: coloured lines for people (LOG_FORMAT). */
  format?: LogFormat;
  /** Where lines go (default stdout); tests pass a stream to read what was written. */
  destination?: pino.DestinationStream;
}

/**
 * JSON logs, one object per line with one `service` key; secrets are redacted wherever they appear under these keys.
 * With tracing on (startTracing ran first), a line written while a span is active carries its `trace_id` and `span_id`.
 */
export function createLogger(service: string, level = 'info', { format = 'json', destination }: LoggerOptions = {}): Logger {
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
    // `url` wherever a line carries one (the access line, a failed request's): its credentials masked.
    serializers: { err: serializeError, error: serializeError, url: redactUrl },
    // Only with tracing on: off, a line costs no context lookup.
    ...(tracingEnabled() ? { mixin: activeTraceFields } : {}),
  };
  const output =
    format === 'pretty'
      ? // Synchronous: a line is on the terminal before the next one, and nothing is lost at exit.
        pretty({
          sync: true,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
          destination: destination ?? 1,
          colorize: destination ? false : undefined,
        })
      : destination;
  const root = output ? pino(options, output) : pino(options);
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
