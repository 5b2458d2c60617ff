import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string = process.env.SIM_LOG_LEVEL ?? 'silent'): Logger {
  return pino({ level, base: { svc: 'wa-sim' } });
}
