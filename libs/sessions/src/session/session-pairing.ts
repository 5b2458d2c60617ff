import type { ConnectRequest } from '@gw/contracts';
import { randomBytes } from 'node:crypto';
import { toDataURL } from 'qrcode';
import { PostgresAuthState } from '../auth-state/postgres-auth-state';
import { chooseBrowserProfile, normaliseSystemName } from '../socket/browser-profile';
import { withAdvSecret } from '../socket/companion-reg-refresh';
import { forgetHistoryFor, requestHistoryFor } from '../socket/history-sync-limit';
import { PairingCodeRefusedError, requestPairingCode } from '../socket/pairing-code';
import type { PairingEvents, SessionConnection } from './session-connection';
import type { SessionEndings } from './session-endings';
import type { SessionState } from './session-state';
import type { SocketSlot } from './socket-slot';

/** The sockets a pairing opens: its first one at once, another after a failed pairing-code request. */
export type PairingSockets = Pick<SessionConnection, 'openNewSocket' | 'scheduleReconnect'>;

/**
 * A new pairing: fresh credentials in memory, a socket that shows a QR (re-rendered when WhatsApp
 * refreshes the registration) or asks for a pairing code, until the phone confirms the link (then
 * the credentials are stored) or the pairing expires.
 */
export class SessionPairing implements PairingEvents {
  private expiryTimer: NodeJS.Timeout | undefined;
  /** Why WhatsApp refused the pairing this session ended on; the connect waiting for it gets the error. */
  private pairingRefusal: string | undefined;

  constructor(
    private readonly state: SessionState,
    private readonly slot: SocketSlot,
    private readonly endings: SessionEndings,
    private readonly sockets: PairingSockets,
  ) {}

  /** Why WhatsApp refused the pairing code, if it did (the session has ended then). */
  get refusal(): string | undefined {
    return this.pairingRefusal;
  }

  async start(request: ConnectRequest): Promise<void> {
    const { state } = this;
    const { config } = state.services;
    const mode = request.phone ? 'code' : 'qr';
    const ttl = mode === 'qr' ? config.qrTtlMs : config.pairCodeTtlMs;
    state.auth = PostgresAuthState.fresh(state.authOptions());
    const identityKey = state.auth.creds.signedIdentityKey.public;
    state.pairing = { mode, phone: request.phone, history: request.history, codeRequested: false, identityKey };
    requestHistoryFor(identityKey, request.history);
    state.phase = 'pairing';
    this.expiryTimer = setTimeout(() => void state.run(() => this.expire()), ttl);
    // No event yet: the first QR / code write announces `connecting` with something to show.
    await state.write(
      {
        patch: {
          status: 'connecting',
          desiredState: 'connected',
          paired: false,
          qrcode: '',
          paircode: '',
          pairingExpiresAt: new Date(Date.now() + ttl),
          browser: chooseBrowserProfile(request.browser, state.row.browser),
          systemName: normaliseSystemName(request.systemName),
          historyDays: request.history.days,
          historyFullSync: request.history.fullSync,
          pairingRequestId: request.requestId,
        },
      },
      { required: true },
    );
    // The write answered the row as stored: no second read before the socket.
    await this.sockets.openNewSocket(undefined, true);
  }

  /** The session ends: the expiry timer stops, the history request is forgotten. */
  stop(): void {
    clearTimeout(this.expiryTimer);
    if (this.state.pairing) forgetHistoryFor(this.state.pairing.identityKey);
  }

  private async expire(): Promise<void> {
    if (this.state.phase !== 'pairing') return;
    await this.endings.stopDisconnected(this.state.pairing?.mode === 'code' ? 'pairing code expired' : 'QR code expired');
  }

  async onQr(qr: string): Promise<void> {
    const { state } = this;
    const pairing = state.pairing;
    const socket = this.slot.socket;
    if (state.phase !== 'pairing' || !pairing) return;
    if (pairing.mode === 'qr') {
      pairing.qr = qr;
      await this.showQr();
    } else if (!pairing.codeRequested && pairing.phone && socket) {
      // The socket is ready once it shows its first QR; the code replaces QR scanning.
      pairing.codeRequested = true;
      let code: string;
      try {
        // Only a code WhatsApp accepted is shown; a refusal ends the pairing and fails the connect.
        code = await requestPairingCode(socket, pairing.phone, state.services.sockets.browser(state.row));
      } catch (error) {
        if (error instanceof PairingCodeRefusedError) {
          this.pairingRefusal = error.message;
          return this.endings.stopDisconnected(error.message);
        }
        // This socket shows no further QR to retry on: start over on a new one (a new code).
        state.logger.warn({ err: error }, 'requesting a pairing code failed; reconnecting');
        this.slot.detach();
        return this.sockets.scheduleReconnect();
      }
      await state.write({ patch: { status: 'connecting', paircode: formatPairingCode(code) }, event: {} });
    }
  }

  /** Every QR Baileys shows (and every re-render) replaces the image and is announced, with the current ADV secret. */
  private async showQr(): Promise<void> {
    const { state } = this;
    const qr = state.pairing?.qr;
    if (!qr || !state.auth) return;
    await state.write({ patch: { status: 'connecting', qrcode: await toDataURL(withAdvSecret(qr, state.auth.creds.advSecretKey)) }, event: {} });
  }

  /**
   * WhatsApp retired the registration material the QR shows (companion_reg_refresh): a new ADV
   * secret, the current ref re-rendered with it, as WhatsApp Web does (Baileys PR #2765). Baileys
   * checks pair-success against `creds.advSecretKey`, so the scan of the new QR links.
   */
  async onRegRefresh(): Promise<void> {
    const { state } = this;
    if (state.phase !== 'pairing' || state.pairing?.mode !== 'qr' || !state.auth) return;
    state.logger.info('companion registration refreshed by WhatsApp; new ADV secret, QR re-rendered');
    state.auth.creds.advSecretKey = randomBytes(32).toString('base64');
    await this.showQr();
  }

  /** The phone confirmed the link: from now on the credentials are real and belong in Postgres. */
  async onPairSuccess(): Promise<void> {
    const { state } = this;
    if (state.phase !== 'pairing' || !state.auth) return;
    clearTimeout(this.expiryTimer);
    state.phase = 'linking';
    if (state.pairing) forgetHistoryFor(state.pairing.identityKey);
    state.pairing = null;
    await state.persistIfPending();
    // `paired` lets another worker adopt the instance should this one die before `open`.
    await state.write({ patch: { paired: true, qrcode: '', paircode: '', pairingExpiresAt: null } });
  }
}

/** `ABCD1234` → `ABCD-1234`, the form the API shows. */
export function formatPairingCode(code: string): string {
  return code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
}
