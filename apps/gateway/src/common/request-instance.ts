import type { InstanceStatus } from '@gw/contracts';
import type { DesiredState, InstanceRow, ProxySettings } from '@gw/persistence';

/**
 * The instance a request's `token` authenticated, as the gateway's handlers read it: plain, read-only
 * data built once by InstanceGuard (issue #37: the ORM's entity stays inside persistence). It holds
 * only what handlers read of the instance as it was when the request came in; a handler that needs
 * the instance as stored now (a status, the record it answers) reads it again through the repository.
 */
export interface RequestInstance {
  readonly id: string;
  /** The token itself: what the accept cache forgets when the instance changes under it. */
  readonly token: string;
  readonly name: string;
  readonly status: InstanceStatus;
  /** Whether some worker should hold a session for it (`disconnected`: disconnected on purpose). */
  readonly desiredState: DesiredState;
  /** Whether a device has been linked (credentials stored). */
  readonly paired: boolean;
  /** The current pairing attempt and the history it asked for (the history sync's status). */
  readonly pairingRequestId: string;
  readonly historyDays: number;
  readonly historyFullSync: boolean;
  /** Set once the session was exported to another server: connect and export are refused. */
  readonly exportedAt: Date | null;
  /** Phone digits, device JID and LID of the linked account ('' before pairing). */
  readonly owner: string;
  readonly jid: string;
  readonly lid: string;
  /** The account's push name ('' unknown): a fallback name in Pix buttons. */
  readonly profileName: string;
  /** The current QR and pairing codes ('' when none): the sandbox relay links a phone only with them. */
  readonly qrcode: string;
  readonly paircode: string;
  /** Default key for transcriptions (never answered unmasked). */
  readonly openaiApikey: string;
  readonly fieldsMap: Readonly<Record<string, string>>;
  readonly proxy: Readonly<ProxySettings> | null;
}

/** The request's view of a stored instance, built once where the request is authenticated (InstanceGuard, the sandbox relay). */
export function toRequestInstance(row: InstanceRow): RequestInstance {
  return {
    id: row.id,
    token: row.token,
    name: row.name,
    status: row.status,
    desiredState: row.desiredState,
    paired: row.paired,
    pairingRequestId: row.pairingRequestId,
    historyDays: row.historyDays,
    historyFullSync: row.historyFullSync,
    exportedAt: row.exportedAt,
    owner: row.owner,
    jid: row.jid,
    lid: row.lid,
    profileName: row.profileName,
    qrcode: row.qrcode,
    paircode: row.paircode,
    openaiApikey: row.openaiApikey,
    fieldsMap: row.fieldsMap ?? {},
    proxy: row.proxy,
  };
}
