import { ErrorCode, RpcError } from '@gw/contracts';
import { jidNormalizedUser, type WASocket } from '@whiskeysockets/baileys';

/** How long a recipient WhatsApp said is on it is taken as such without asking again. */
export const KNOWN_RECIPIENT_TTL_MS = 10 * 60_000;
/** Recipients remembered per socket at most; the table starts over when full. */
const MAX_KNOWN = 20_000;

/**
 * The recipients WhatsApp confirmed are on it, per socket, until when (ms since the epoch). A status goes to
 * the same audience again and again, and asking WhatsApp about all of it before each one was a round trip
 * to its servers on every status (a usync query each time, the kind of repeated contact lookup WhatsApp
 * watches). Only confirmations are kept: someone not on WhatsApp is asked about again next time (they may
 * have joined).
 */
const confirmed = new WeakMap<WASocket, Map<string, number>>();

/**
 * The recipients of a status that are on WhatsApp (one batched query for those not confirmed in the last
 * KNOWN_RECIPIENT_TTL_MS); the others with the reason.
 */
export async function statusAudience(
  socket: WASocket,
  jids: string[],
  now: () => number = Date.now,
): Promise<{ recipients: string[]; discarded: Array<{ input: string; reason: string }> }> {
  const unique = [...new Set(jids)];
  if (unique.length === 0) throw new RpcError(ErrorCode.BadRequest, 'no valid recipients for the status');
  let table = confirmed.get(socket);
  if (!table) confirmed.set(socket, (table = new Map()));
  const known = new Set<string>();
  const unknown: string[] = [];
  const asked = now();
  for (const jid of unique) {
    const normalized = jidNormalizedUser(jid);
    if ((table.get(normalized) ?? 0) > asked) known.add(normalized);
    else unknown.push(jid);
  }
  if (unknown.length > 0) {
    const found = (await socket.onWhatsApp(...unknown)) ?? [];
    if (table.size + found.length > MAX_KNOWN) table.clear();
    const until = now() + KNOWN_RECIPIENT_TTL_MS;
    for (const entry of found)
      if (entry.exists) {
        const normalized = jidNormalizedUser(entry.jid);
        known.add(normalized);
        table.set(normalized, until);
      }
  }
  const recipients = unique.filter((jid) => known.has(jidNormalizedUser(jid)));
  const discarded = unique.filter((jid) => !known.has(jidNormalizedUser(jid))).map((jid) => ({ input: jid, reason: 'not_on_whatsapp' }));
  if (recipients.length === 0)
    throw new RpcError(ErrorCode.BadRequest, `no valid recipients for the status: ${discarded.map((entry) => entry.input).join(', ')} not on WhatsApp`);
  return { recipients, discarded };
}
