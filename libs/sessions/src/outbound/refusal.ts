/**
 * How a message WhatsApp refused (an error ack: `<ack class="message" error="463">`) is described in
 * its record's `error`. One wording whichever path records it first (the send waiting for its ack, or
 * the inbound handler seeing Baileys' status update), so the gateway reads the same `provider_code`.
 */
export function refusalText(code: string): string {
  return `WhatsApp refused the message (error ${code}${code === '463' ? ': account restricted or missing privacy token' : ''})`;
}

/** What a send to a group WhatsApp does not show the instance answers (404 at the gateway, the record's error when queued). */
export const GROUP_NOT_FOUND = 'group not found: it does not exist or this instance is not in it';

/**
 * Whether `error` is WhatsApp refusing the metadata query of the group `chatJid` (Baileys fetches it to
 * fan a group message out, and for `mentions: all` or a pin): `item-not-found` (404) for a group that
 * does not exist, `forbidden` (403) for one the instance is not in. Baileys throws these as a Boom
 * carrying the IQ's error code in `data`.
 */
export function isUnknownGroup(chatJid: string, error: unknown): boolean {
  if (!chatJid.endsWith('@g.us') || !error || typeof error !== 'object') return false;
  const { data, message } = error as { data?: unknown; message?: unknown };
  return (data === 404 && message === 'item-not-found') || (data === 403 && message === 'forbidden');
}
