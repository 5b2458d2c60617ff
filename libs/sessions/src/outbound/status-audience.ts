import { ErrorCode, RpcError } from '@gw/contracts';
import { jidNormalizedUser, type WASocket } from '@whiskeysockets/baileys';

/** The recipients of a status that are on WhatsApp (one batched query); the others with the reason. */
export async function statusAudience(socket: WASocket, jids: string[]): Promise<{ recipients: string[]; discarded: Array<{ input: string; reason: string }> }> {
  const unique = [...new Set(jids)];
  if (unique.length === 0) throw new RpcError(ErrorCode.BadRequest, 'no valid recipients for the status');
  const found = (await socket.onWhatsApp(...unique)) ?? [];
  const known = new Set(found.filter((entry) => entry.exists).map((entry) => jidNormalizedUser(entry.jid)));
  const recipients = unique.filter((jid) => known.has(jidNormalizedUser(jid)));
  const discarded = unique.filter((jid) => !known.has(jidNormalizedUser(jid))).map((jid) => ({ input: jid, reason: 'not_on_whatsapp' }));
  if (recipients.length === 0)
    throw new RpcError(ErrorCode.BadRequest, `no valid recipients for the status: ${discarded.map((entry) => entry.input).join(', ')} not on WhatsApp`);
  return { recipients, discarded };
}
