import { isJidGroup, proto, type WAMessage, type WASocket } from '@whiskeysockets/baileys';
import { ErrorCode, RpcError } from '@gw/contracts';

type RelayOptions = NonNullable<Parameters<WASocket['relayMessage']>[2]>;

/**
 * Whether a send failed because the connection to WhatsApp went away under it (closed, lost, timed
 * out, a stream error or restart asked by the server), not because WhatsApp or the request refused
 * it: the same message, same id, may go again on the next socket.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (error instanceof RpcError) return error.code === ErrorCode.NotConnected;
  if (!error || typeof error !== 'object') return false;
  const { isBoom, output, message, data } = error as { isBoom?: boolean; output?: { statusCode?: number }; message?: unknown; data?: unknown };
  // An IQ WhatsApp answered with an error (Baileys' Boom carries its code in `data`, status 500 by
  // default): the server spoke, the connection is fine.
  if (isBoom && typeof data === 'number') return false;
  // 408 timed out / lost, 428 closed, 440 replaced, 515 restart required.
  if (isBoom && [408, 428, 440, 515].includes(output?.statusCode ?? 0)) return true;
  return typeof message === 'string' && /connection (closed|terminated|lost)|timed out|socket hang up|ECONNRESET|EPIPE/i.test(message);
}

/**
 * The stanza attributes and nodes that go with a message as sendMessage first relayed it (an edit,
 * a revoke, a pin, a poll or an event creation), so a resend with the same id says the same.
 */
export function resendOptions(message: proto.IMessage, messageId: string, statusJidList?: string[]): RelayOptions {
  const options: RelayOptions = { messageId, ...(statusJidList ? { statusJidList } : {}) };
  const protocol = message.protocolMessage;
  if (protocol?.type === proto.Message.ProtocolMessage.Type.REVOKE) {
    const key = protocol.key;
    options.additionalAttributes = { edit: isJidGroup(key?.remoteJid ?? undefined) && !key?.fromMe ? '8' : '7' };
  } else if (protocol?.type === proto.Message.ProtocolMessage.Type.MESSAGE_EDIT) {
    options.additionalAttributes = { edit: '1' };
  } else if (message.pinInChatMessage) {
    options.additionalAttributes = { edit: '2' };
  } else if (message.pollCreationMessage || message.pollCreationMessageV2 || message.pollCreationMessageV3) {
    options.additionalNodes = [{ tag: 'meta', attrs: { polltype: 'creation' } }];
  } else if (message.eventMessage) {
    options.additionalNodes = [{ tag: 'meta', attrs: { event_type: 'creation' } }];
  }
  return options;
}

/** Relays a message that went out before (its stored copy) again, with its own id. */
export async function resend(socket: WASocket, stored: WAMessage): Promise<void> {
  const chatJid = stored.key.remoteJid;
  const id = stored.key.id;
  if (!chatJid || !id || !stored.message) throw new Error('the stored copy has no chat, id or message');
  await socket.relayMessage(chatJid, stored.message, resendOptions(stored.message, id));
}
