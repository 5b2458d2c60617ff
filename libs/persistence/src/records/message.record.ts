import type { MessageRecord } from '@gw/contracts';
import type { RecordRow } from '../repositories/message-row';

/** The API's Message record (spec "Message record"; extra fields as the real captures carry them). */
// A RecordRow: the record never carries the raw WAMessage (a full MessageRow is one too).
export function toMessageRecord(row: RecordRow, owner: string): MessageRecord {
  return {
    id: row.id,
    messageid: row.messageId,
    chatid: row.chatId,
    chatlid: row.chatLid,
    sender: row.sender,
    sender_pn: row.senderPn,
    sender_lid: row.senderLid,
    senderName: row.senderName,
    isGroup: row.isGroup,
    fromMe: row.fromMe,
    messageType: row.messageType,
    type: row.type,
    mediaType: row.mediaType,
    source: row.source,
    messageTimestamp: row.messageTimestamp,
    status: row.status,
    text: row.text,
    quoted: row.quoted,
    edited: row.edited,
    reaction: row.reaction,
    vote: row.vote,
    convertOptions: row.convertOptions,
    buttonOrListid: row.buttonOrListId,
    owner,
    error: row.error,
    content: row.content ?? {},
    wasSentByApi: row.wasSentByApi,
    pinned: row.pinned,
    sendFunction: row.sendFunction,
    sendPayload: row.sendPayload ?? {},
    fileURL: row.fileUrl,
    send_folder_id: row.sendFolderId,
    track_source: row.trackSource,
    track_id: row.trackId,
    // The known contact of a call, on call messages only (spec: "when `messageType` is `call`").
    ...(row.messageType === 'call' ? { callPeer: row.callPeer ?? { jid: row.sender, name: row.senderName, imagePreviewUrl: '' } } : {}),
    // An object as the spec types it; empty unless an AI agent recorded its round on the message.
    ai_metadata: row.aiMetadata ?? {},
    // A LID-only sender whose phone number WhatsApp has not told us (yet): said, not left to guess.
    ...(row.senderLid && !row.senderPn ? { sender_pn_unresolved: true as const } : {}),
  };
}
