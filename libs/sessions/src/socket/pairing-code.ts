import { randomBytes } from 'node:crypto';
import {
  aesEncryptCTR,
  bytesToCrockford,
  derivePairingCodeKey,
  getCompanionPlatformId,
  jidEncode,
  S_WHATSAPP_NET,
  type WABrowserDescription,
  type WASocket,
} from '../baileys';

/** WhatsApp answered the pairing-code request with an error IQ: the code was never registered. */
export class PairingCodeRefusedError extends Error {
  constructor(
    readonly code: number | undefined,
    readonly text: string,
  ) {
    super(`WhatsApp refused the pairing code request${code ? ` (${code}: ${text})` : ` (${text})`}`);
    this.name = 'PairingCodeRefusedError';
  }
}

/**
 * Asks WhatsApp for a pairing code for `phone` and returns it only once the server accepted it.
 * Baileys' own `requestPairingCode` (rc14) writes the `companion_hello` IQ and returns the code
 * without reading the answer, so a refusal (429 rate-overlimit, 400 bad-request: Baileys issues
 * #2008, #2737) showed a code the server never registered. Same stanza and credentials as Baileys',
 * sent through `query` (which rejects on an error IQ); Baileys' own handling of the phone's
 * `primary_hello` then finishes the link from `creds.pairingCode` and `creds.pairingEphemeralKeyPair`.
 */
export async function requestPairingCode(socket: WASocket, phone: string, browser: WABrowserDescription): Promise<string> {
  const { creds } = socket.authState;
  const code = bytesToCrockford(randomBytes(5));
  creds.pairingCode = code;
  creds.me = { id: jidEncode(phone, 's.whatsapp.net'), name: '~' };
  socket.ev.emit('creds.update', creds);
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const key = await derivePairingCodeKey(code, salt);
  const wrappedEphemeral = Buffer.concat([salt, iv, aesEncryptCTR(creds.pairingEphemeralKeyPair.public, key, iv)]);
  try {
    await socket.query({
      tag: 'iq',
      attrs: { to: S_WHATSAPP_NET, type: 'set', xmlns: 'md' },
      content: [
        {
          tag: 'link_code_companion_reg',
          attrs: { jid: creds.me.id, stage: 'companion_hello', should_show_push_notification: 'true' },
          content: [
            { tag: 'link_code_pairing_wrapped_companion_ephemeral_pub', attrs: {}, content: wrappedEphemeral },
            { tag: 'companion_server_auth_key_pub', attrs: {}, content: creds.noiseKey.public },
            { tag: 'companion_platform_id', attrs: {}, content: getCompanionPlatformId(browser) },
            { tag: 'companion_platform_display', attrs: {}, content: `${browser[1]} (${browser[0]})` },
            { tag: 'link_code_pairing_nonce', attrs: {}, content: '0' },
          ],
        },
      ],
    });
  } catch (error) {
    // assertNodeErrorFree: a Boom whose data is the error IQ's code; anything else (timeout, closed) is no answer.
    const data = (error as { data?: unknown }).data;
    if (typeof data === 'number' && Number.isFinite(data)) throw new PairingCodeRefusedError(data, (error as Error).message);
    throw error;
  }
  return code;
}
