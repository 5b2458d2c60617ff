import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** JSON logs; secrets are redacted wherever they appear under these keys. */
export function createLogger(service: string, level = 'info'): Logger {
  return pino({
    level,
    base: { service },
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
  });
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
