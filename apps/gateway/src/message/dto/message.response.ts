import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ANY_JSON, MessageResponse } from '../../common/dto/message.response';

/** `POST /message/find`: a page of messages and where it sits. */
@ApiSchema({ name: 'MessagePage', description: 'A page of the stored messages the filter matched, newest first unless asked otherwise' })
export class MessagePageResponse {
  @ApiProperty({ type: 'integer', description: 'How many messages this page holds' })
  returnedMessages!: number;
  @ApiProperty({ type: () => MessageResponse, isArray: true, description: 'The messages of this page' })
  messages!: MessageResponse[];
  @ApiProperty({ type: 'integer', description: 'The page size asked for' })
  limit!: number;
  @ApiProperty({ type: 'integer', description: 'How many matched messages the page skipped' })
  offset!: number;
  @ApiProperty({ type: 'integer', description: 'The `offset` of the next page' })
  nextOffset!: number;
  @ApiProperty({ description: 'More messages match after this page' })
  hasMore!: boolean;
}

/** `POST /message/download`. */
@ApiSchema({ name: 'MessageDownload', description: "A media message's file: a link, its bytes as base64, and what an audio says" })
export class MessageDownloadResponse {
  @ApiProperty({ description: "Where the file is served: this gateway's /files/{id}, or a signed S3 link (empty with `return_link: false`)" })
  fileURL!: string;
  @ApiProperty({ description: "The file's MIME type (`audio/mpeg` once an audio is converted to MP3)", example: 'audio/ogg; codecs=opus' })
  mimetype!: string;
  @ApiProperty({ description: 'The file as base64 (`return_base64`; empty otherwise)' })
  base64Data!: string;
  @ApiProperty({ description: 'What the audio says (`transcribe`; empty otherwise)' })
  transcription!: string;
}

/** `POST /message/react`, `POST /message/edit`: the message sent for the action. */
@ApiSchema({ name: 'MessageAction', description: 'The message sent for a reaction or an edit' })
export class MessageActionResponse {
  @ApiProperty({ description: "The message's id in the gateway: the reaction's own, or the edited message's" })
  id!: string;
  @ApiProperty({ description: "WhatsApp's id of the message: the reaction's own, or the edited message's" })
  messageid!: string;
  @ApiProperty({
    ...ANY_JSON,
    description: 'What was sent: the reaction or the new text, as WhatsApp carries it',
  })
  content!: unknown;
  @ApiProperty({ type: 'integer', description: 'When it was sent (Unix milliseconds)' })
  messageTimestamp!: number;
  @ApiProperty({ description: "The message's type: `reaction`, or the edited message's own" })
  messageType!: string;
  @ApiProperty({ description: 'Where the message is in its life (`Pending` for a reaction just sent)' })
  status!: string;
  @ApiProperty({ description: "The instance's phone number" })
  owner!: string;
  @ApiPropertyOptional({ description: 'A reaction: the id of the message it reacts to' })
  reaction?: string;
}

/** `POST /message/delete`. */
@ApiSchema({ name: 'MessageDeleted', description: 'The message revoked for everyone' })
export class MessageDeletedResponse {
  @ApiProperty({ type: 'integer', description: 'When it was revoked (Unix milliseconds)' })
  timestamp!: number;
  @ApiProperty({ description: "The revoked message's id in the gateway (`owner:messageid`)" })
  id!: string;
}

/** `POST /message/pin`: the pin message sent for the chat. */
@ApiSchema({ name: 'MessagePinned', description: 'The pin (or unpin) message sent for the chat, and the message it pins' })
export class MessagePinnedResponse extends MessageResponse {
  @ApiProperty({ description: "WhatsApp's id of the message pinned or unpinned" })
  targetMessageID!: string;
}

/** `POST /message/history-sync`'s `details`: what was asked of the phone. */
@ApiSchema({ name: 'HistorySyncDetails', description: 'What was asked of the phone' })
export class HistorySyncDetails {
  @ApiProperty({ description: "The request's id; the history-sync events it brings carry it" })
  request_id!: string;
  @ApiProperty({ description: 'The chat (a JID)' })
  chatid!: string;
  @ApiPropertyOptional({ description: '`exact`: the message to reload' })
  messageid?: string;
  @ApiPropertyOptional({ description: '`exact`: the message is stored here (its exact key was sent), else a best guess was' })
  known_locally?: boolean;
  @ApiPropertyOptional({ description: '`history`: the message the history is asked before' })
  anchor_messageid?: string;
  @ApiPropertyOptional({ type: 'integer', description: "`history`: the anchor's time (Unix milliseconds)" })
  anchor_timestamp?: number;
  @ApiPropertyOptional({ type: 'integer', description: '`history`: how many messages were asked for' })
  count?: number;
}

/** `POST /message/history-sync`. */
@ApiSchema({ name: 'HistorySync', description: "A chat's history asked of the phone: the messages arrive later as history-sync events" })
export class HistorySyncResponse {
  @ApiProperty({ description: 'Always true: the request was sent' })
  success!: boolean;
  @ApiProperty({ enum: ['history', 'exact'], description: '`history`: messages before an anchor; `exact`: one message reloaded' })
  mode!: 'history' | 'exact';
  @ApiProperty({ description: 'What happens next, in words' })
  message!: string;
  @ApiProperty({ type: () => HistorySyncDetails, description: 'What was asked of the phone' })
  details!: HistorySyncDetails;
}

/** One id of `POST /message/markread`. */
@ApiSchema({ name: 'MarkReadResult', description: 'What became of one message marked read' })
export class MarkReadResult {
  @ApiProperty({ description: 'The message, as given (or its WhatsApp id once found)' })
  message_id!: string;
  @ApiProperty({ enum: ['success', 'error'], description: 'Whether it was marked read' })
  status!: 'success' | 'error';
  @ApiPropertyOptional({ description: 'Why not, on an error' })
  error?: string;
}

/** `POST /message/markread`: one result per id. */
@ApiSchema({ name: 'MarkRead', description: 'One result per message marked read' })
export class MarkReadResponse {
  @ApiProperty({ type: () => MarkReadResult, isArray: true, description: 'One result per message' })
  results!: MarkReadResult[];
}
