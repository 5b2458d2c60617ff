import type { ConnectRequest } from '@gw/contracts';
import { randomBytes } from 'node:crypto';
import { toDataURL } from 'qrcode';
import { PostgresAuthState } from '../auth-state/postgres-auth-state';
import { chooseBrowserProfile, normaliseSystemName } from '../socket/browser-profile';
import { withAdvSecret } from '../socket/companion-reg-refresh';
import { forgetHistoryFor, requestHistoryFor } from '../socket/history-sync-limit';
import { PairingCodeRefusedError, requestPairingCode } from '../socket/pairing-code';
import { SessionConnection } from './session-connection';

/**
 * A new pairing: fresh credentials in memory, a socket that shows a QR (re-rendered when WhatsApp
 * refreshes the registration) or asks for a pairing code, until the phone confirms the link (then
 * the credentials are stored) or the pairing expires.
 */
export abstract class SessionPairing extends SessionConnection {
  protected async startPairing(request: ConnectRequest): Promise<void> {
    const { config } = this.services;
    const mode = request.phone ? 'code' : 'qr';
    const ttl = mode === 'qr' ? config.qrTtlMs : config.pairCodeTtlMs;
    this.auth = PostgresAuthState.fresh(this.authOptions());
    const identityKey = this.auth.creds.signedIdentityKey.public;
    this.pairing = { mode, phone: request.phone, history: request.history, codeRequested: false, identityKey };
    requestHistoryFor(identityKey, request.history);
    this.phase = 'pairing';
    this.expiryTimer = setTimeout(() => void this.run(() => this.expirePairing()), ttl);
    // No event yet: the first QR / code write announces `connecting` with something to show.
    await this.write(
      {
        patch: {
          status: 'connecting',
          desiredState: 'connected',
          paired: false,
          qrcode: '',
          paircode: '',
          pairingExpiresAt: new Date(Date.now() + ttl),
          browser: chooseBrowserProfile(request.browser, this.row.browser),
          systemName: normaliseSystemName(request.systemName),
          historyDays: request.history.days,
          historyFullSync: request.history.fullSync,
          pairingRequestId: request.requestId,
        },
      },
      { required: true },
    );
    // The write answered the row as stored: no second read before the socket.
    await this.openNewSocket(undefined, true);
  }

  private async expirePairing(): Promise<void> {
    if (this.phase !== 'pairing') return;
    await this.stopDisconnected(this.pairing?.mode === 'code' ? 'pairing code expired' : 'QR code expired');
  }

  protected override async onQr(qr: string): Promise<void> {
    const pairing = this.pairing;
    if (this.phase !== 'pairing' || !pairing) return;
    if (pairing.mode === 'qr') {
      pairing.qr = qr;
      await this.showQr();
    } else if (!pairing.codeRequested && pairing.phone && this.socket) {
      // The socket is ready once it shows its first QR; the code replaces QR scanning.
      pairing.codeRequested = true;
      let code: string;
      try {
        // Only a code WhatsApp accepted is shown; a refusal ends the pairing and fails the connect.
        code = await requestPairingCode(this.socket, pairing.phone, this.services.sockets.browser(this.row));
      } catch (error) {
        if (error instanceof PairingCodeRefusedError) {
          this.pairingRefusal = error.message;
          return this.stopDisconnected(error.message);
        }
        // This socket shows no further QR to retry on: start over on a new one (a new code).
        this.logger.warn({ err: error }, 'requesting a pairing code failed; reconnecting');
        this.detachSocket();
        return this.scheduleReconnect();
      }
      await this.write({ patch: { status: 'connecting', paircode: formatPairingCode(code) }, event: {} });
    }
  }

  /** Every QR Baileys shows (and every re-render) replaces the image and is announced, with the current ADV secret. */
  private async showQr(): Promise<void> {
    const qr = this.pairing?.qr;
    if (!qr || !this.auth) return;
    await this.write({ patch: { status: 'connecting', qrcode: await toDataURL(withAdvSecret(qr, this.auth.creds.advSecretKey)) }, event: {} });
  }

  /**
   * WhatsApp retired the registration material the QR shows (companion_reg_refresh): a new ADV
   * secret, the current ref re-rendered with it, as WhatsApp Web does (Baileys PR #2765). Baileys
   * checks pair-success against `creds.advSecretKey`, so the scan of the new QR links.
   */
  protected override async onRegRefresh(): Promise<void> {
    if (this.phase !== 'pairing' || this.pairing?.mode !== 'qr' || !this.auth) return;
    this.logger.info('companion registration refreshed by WhatsApp; new ADV secret, QR re-rendered');
    this.auth.creds.advSecretKey = randomBytes(32).toString('base64');
    await this.showQr();
  }

  /** The phone confirmed the link: from now on the credentials are real and belong in Postgres. */
  protected override async onPairSuccess(): Promise<void> {
    if (this.phase !== 'pairing' || !this.auth) return;
    clearTimeout(this.expiryTimer);
    this.phase = 'linking';
    if (this.pairing) forgetHistoryFor(this.pairing.identityKey);
    this.pairing = null;
    await this.persistIfPending();
    // `paired` lets another worker adopt the instance should this one die before `open`.
    await this.write({ patch: { paired: true, qrcode: '', paircode: '', pairingExpiresAt: null } });
  }
}

/** `ABCD1234` → `ABCD-1234`, the form the API shows. */
export function formatPairingCode(code: string): string {
  return code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
}
