import type { HistoryRequest } from '@gw/contracts';
import type { AuthStateRepository, InstanceRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { SessionWorkerConfig } from '../config/session-worker.config';
import type { SocketFactory } from '../socket/socket-factory';
import type { HandshakeGate } from './handshake-gate';
import type { ReconnectPacer } from './reconnect-pacer';
import type { Session } from './session';
import type { SessionStateWriter } from './session-state-writer';
import type { SocketObserver } from './socket-observer';

export interface SessionServices {
  config: SessionWorkerConfig;
  instances: InstanceRepository;
  authStates: AuthStateRepository;
  writer: SessionStateWriter;
  sockets: SocketFactory;
  /** The worker's bound on reconnect handshakes at once. */
  handshakes: HandshakeGate;
  /** The worker's reconnect backoffs, cut short together when the server is reachable again. */
  pacer: ReconnectPacer;
  observers: readonly SocketObserver[];
  logger: Logger;
}

/** Told when a session is over; `release` is false when the lease was lost (nothing may be written). */
export interface SessionOwner {
  sessionEnded(session: Session, outcome: { release: boolean }): Promise<void>;
}

/**
 * - idle: claimed, nothing started yet
 * - pairing: new pairing, socket waits for a QR scan or the pairing code (credentials in memory)
 * - linking: the phone confirmed (pair-success); credentials are stored; waiting for 515 → login
 * - connecting: paired, socket (re)connecting, possibly after a backoff delay
 * - open: connected and logged in
 * - ended: closed for good; the owner has been told
 */
export type SessionPhase = 'idle' | 'pairing' | 'linking' | 'connecting' | 'open' | 'ended';

export interface Pairing {
  mode: 'qr' | 'code';
  phone?: string;
  history: HistoryRequest;
  codeRequested: boolean;
  identityKey: Uint8Array;
  /** The QR text Baileys last showed (re-rendered with a new ADV secret on companion_reg_refresh). */
  qr?: string;
}

/** A command reached a session that has just ended (the bus maps it to `No session`). */
export class SessionEndedError extends Error {
  constructor(instanceId: string) {
    super(`session ${instanceId} has ended`);
    this.name = 'SessionEndedError';
  }
}
