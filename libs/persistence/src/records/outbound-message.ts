import type { OutboundContent, SendRequest } from '@gw/contracts';
import { describeContent } from '@gw/domain';
import type { NewMessage } from '../repositories/message-row';

/**
 * The messages row of a send accepted through the API: `Queued` for the async queue, `Pending` when
 * the worker reserves it just before relaying. One function, so both write the same fields.
 */
export function outboundMessageRow(request: SendRequest, owner: string, status: 'Queued' | 'Pending'): NewMessage {
  const described = describeContent(outboundPreview(request.content));
  return {
    instanceId: request.instanceId,
    id: request.recordId,
    messageId: request.messageId,
    chatId: request.chatJid,
    chatLid: request.chatJid.endsWith('@lid') ? request.chatJid : '',
    sender: owner ? `${owner}@s.whatsapp.net` : '',
    senderPn: owner ? `${owner}@s.whatsapp.net` : '',
    senderLid: '',
    senderName: '',
    isGroup: request.chatJid.endsWith('@g.us'),
    fromMe: true,
    messageType: described.messageType,
    type: described.type,
    mediaType: described.mediaType,
    source: 'api',
    messageTimestamp: Date.now(),
    status,
    text: described.text,
    quoted: request.quotedId ?? '',
    edited: described.edited,
    reaction: described.reaction,
    vote: '',
    convertOptions: '',
    buttonOrListId: '',
    error: '',
    content: described.content,
    raw: null,
    wasSentByApi: true,
    pinned: false,
    sendFunction: request.record.sendFunction,
    sendPayload: request.record.sendPayload,
    fileUrl: request.record.fileUrl ?? '',
    sendFolderId: request.record.sendFolderId,
    trackSource: request.record.trackSource,
    trackId: request.record.trackId,
    aiMetadata: request.record.aiMetadata ?? null,
  };
}

/** A WAProto-shaped preview of what is being sent, so the stored row already says what it is. */
export function outboundPreview(content: OutboundContent): Record<string, unknown> {
  switch (content.kind) {
    case 'text':
      return { extendedTextMessage: { text: content.text } };
    case 'media':
      return {
        [`${content.mediaType}Message`]: {
          caption: content.caption,
          mimetype: content.mimetype,
          fileName: content.fileName,
          ptt: content.ptt,
          gifPlayback: content.gifPlayback,
        },
      };
    case 'contacts':
      return content.vcards.length === 1
        ? { contactMessage: { displayName: content.displayName, vcard: content.vcards[0] } }
        : { contactsArrayMessage: { displayName: content.displayName } };
    case 'location':
      return { locationMessage: { degreesLatitude: content.latitude, degreesLongitude: content.longitude, name: content.name, address: content.address } };
    case 'proto':
      return content.message;
    case 'reaction':
      return { reactionMessage: { text: content.emoji, key: { id: content.targetMessageId } } };
    case 'edit':
      return { protocolMessage: { type: 14, key: { id: content.targetMessageId }, editedMessage: { conversation: content.text } } };
    case 'delete':
      return { protocolMessage: { type: 0, key: { id: content.targetMessageId } } };
    case 'pin':
      return { pinInChatMessage: { key: { id: content.targetMessageId }, type: content.pin ? 1 : 2 } };
  }
}
