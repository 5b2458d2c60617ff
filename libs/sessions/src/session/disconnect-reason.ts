import { DisconnectReason } from '../baileys';

/** What a socket close means for the session. */
export type CloseVerdict =
  /** Pairing finished; WhatsApp wants a new socket with the same credentials (515). */
  | { kind: 'restart' }
  /** The device was unlinked (401): credentials are worthless now. */
  | { kind: 'logged-out'; reason: string }
  /** Stop and stay disconnected, credentials kept (440 replaced, 403 forbidden, 411 mismatch). */
  | { kind: 'terminal'; reason: string }
  /** 405: WhatsApp refused our WhatsApp Web version; log in again with a newer one (credentials kept). */
  | { kind: 'outdated'; reason: string }
  /** Network trouble or server hiccup: reconnect with backoff. */
  | { kind: 'transient'; reason: string };

/** `<failure reason="405">` at login: the client version is out of date (whatsmeow's ConnectFailureClientOutdated). */
export const CLIENT_OUTDATED = 405;

const TRANSIENT_TEXT: Record<number, string> = {
  [DisconnectReason.connectionClosed]: 'connection closed',
  [DisconnectReason.connectionLost]: 'connection lost',
  [DisconnectReason.badSession]: 'bad session',
  [DisconnectReason.unavailableService]: 'service unavailable',
};

/** Maps the status code Baileys ended the socket with (a Boom's statusCode) to a verdict. */
export function classifyClose(statusCode: number | undefined): CloseVerdict {
  switch (statusCode) {
    case DisconnectReason.restartRequired:
      return { kind: 'restart' };
    case DisconnectReason.loggedOut:
      return { kind: 'logged-out', reason: '401: logged out from another device' };
    case DisconnectReason.connectionReplaced:
      return { kind: 'terminal', reason: '440: connection replaced' };
    case DisconnectReason.forbidden:
      return { kind: 'terminal', reason: '403: forbidden' };
    case DisconnectReason.multideviceMismatch:
      return { kind: 'terminal', reason: '411: multi-device mismatch' };
    case CLIENT_OUTDATED:
      return { kind: 'outdated', reason: '405: client outdated' };
    case undefined:
      return { kind: 'transient', reason: 'connection closed' };
    default:
      return { kind: 'transient', reason: `${statusCode}: ${TRANSIENT_TEXT[statusCode] ?? 'connection error'}` };
  }
}

/** Network errors of a connection that never got through (a reset of one that did is a mere drop). */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'ETIMEDOUT']);

/**
 * `cannot reach WhatsApp: connect ECONNREFUSED 1.2.3.4:443` when the socket never got through (refused,
 * no route, no DNS, timed out): Baileys wraps the network error in a Boom whose `data` (or `cause`) is it.
 */
export function unreachableReason(error: Error | undefined): string | undefined {
  const detail = error as (Error & { data?: unknown; cause?: unknown }) | undefined;
  for (const candidate of [detail?.data, detail?.cause, detail]) {
    const code = (candidate as NodeJS.ErrnoException | undefined)?.code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return `cannot reach WhatsApp: ${(candidate as Error).message || code}`;
  }
  return undefined;
}

/** Exponential backoff with jitter: base·2^attempt capped at max, then scaled by a random 50–100 %. */
export function reconnectDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 20));
  return Math.round(ceiling * (0.5 + random() * 0.5));
}
