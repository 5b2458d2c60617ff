import { ApiProperty, ApiPropertyOptional, ApiSchema, type SchemaObject } from '@nestjs/swagger';

/** Any JSON value: a field the record carries as WhatsApp or the request gave it (an object, text, or null). */
export const ANY_JSON: { oneOf: SchemaObject[] } = {
  oneOf: [
    { type: 'object', additionalProperties: true },
    { type: 'array', items: {} },
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'null' },
  ],
};

/** `callPeer` of a call message: the caller as the instance knows it. */
@ApiSchema({ name: 'MessageCallPeer', description: 'The other party of a call, as the instance knows it' })
export class MessageCallPeer {
  @ApiProperty({ description: 'Their WhatsApp id', example: '5511888888888@s.whatsapp.net' })
  jid!: string;
  @ApiProperty({ description: 'Their best known name (empty when unknown)' })
  name!: string;
  @ApiProperty({ description: "Their profile picture's preview URL (empty when unknown)" })
  imagePreviewUrl!: string;
}

/** A message record (send/*, message/find, webhooks' `message`). */
@ApiSchema({ name: 'Message', description: 'A message of the instance, sent or received, as the gateway stores it' })
export class MessageResponse {
  @ApiPropertyOptional({ description: "The message's own id in the gateway" })
  id?: string;
  @ApiPropertyOptional({ description: "WhatsApp's id of the message" })
  messageid?: string;
  @ApiPropertyOptional({ description: 'The chat the message belongs to (a JID)' })
  chatid?: string;
  @ApiPropertyOptional({ description: 'The sender (a JID: phone number or LID)' })
  sender?: string;
  @ApiPropertyOptional({ description: "The sender's name as shown (push name)" })
  senderName?: string;
  @ApiPropertyOptional({ description: 'The message was sent in a group' })
  isGroup?: boolean;
  @ApiPropertyOptional({ description: 'The message was sent by this instance (its phone or the API)' })
  fromMe?: boolean;
  @ApiPropertyOptional({ description: "The content's type, as WhatsApp names it (`ExtendedTextMessage`, `ImageMessage`…)" })
  messageType?: string;
  @ApiPropertyOptional({ description: 'Where the message came from: the sending platform (`android`, `ios`, `web`…) or `api`' })
  source?: string;
  @ApiPropertyOptional({ type: 'integer', description: 'When the message was sent (Unix milliseconds)' })
  messageTimestamp?: number;
  @ApiPropertyOptional({ description: 'Where the message is in its life: `Queued`, `Canceled`, `Failed`, `Sent`, `Delivered`, `Read`…' })
  status?: string;
  @ApiPropertyOptional({ description: "The message's text (or a media message's caption)" })
  text?: string;
  @ApiPropertyOptional({ description: 'The id of the message this one quotes (replies to)' })
  quoted?: string;
  @ApiPropertyOptional({ description: "The message's edits" })
  edited?: string;
  @ApiPropertyOptional({ description: 'The id of the message this reaction reacts to' })
  reaction?: string;
  @ApiPropertyOptional({ description: 'The votes of a poll or the choices of a list' })
  vote?: string;
  @ApiPropertyOptional({ description: "A list's, poll's or buttons' options, converted to text" })
  convertOptions?: string;
  @ApiPropertyOptional({ description: 'The id of the button or list item chosen' })
  buttonOrListid?: string;
  @ApiPropertyOptional({ description: "The instance's phone number" })
  owner?: string;
  @ApiPropertyOptional({ description: 'Why the send failed (empty when it did not)' })
  error?: string;
  @ApiPropertyOptional({ ...ANY_JSON, description: "The message's content as WhatsApp carried it (an object, or text)" })
  content?: unknown;
  @ApiPropertyOptional({ description: 'The message was sent through the API' })
  wasSentByApi?: boolean;
  @ApiPropertyOptional({ description: 'The API function that sent it (`SendTextMessage`…), when sent through the API' })
  sendFunction?: string;
  @ApiPropertyOptional({ ...ANY_JSON, description: 'The request that sent it, when sent through the API' })
  sendPayload?: unknown;
  @ApiPropertyOptional({ description: "The message's file: a URL, or where /files serves it" })
  fileURL?: string;
  @ApiPropertyOptional({ description: 'The mass-send folder (campaign) that sent it, when one did' })
  send_folder_id?: string;
  @ApiPropertyOptional({ description: 'The tracking source given to the send' })
  track_source?: string;
  @ApiPropertyOptional({ description: 'The tracking id given to the send (may repeat)' })
  track_id?: string;
  @ApiPropertyOptional({ description: "The sender's phone-number JID, when known" })
  sender_pn?: string;
  @ApiPropertyOptional({
    type: 'boolean',
    description: 'Present (true) when the sender is known only by its LID and WhatsApp has not told its phone number yet',
  })
  sender_pn_unresolved?: boolean;
  @ApiPropertyOptional({ description: "The sender's LID, when known" })
  sender_lid?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: "An AI agent's round on the message (empty when none)" })
  ai_metadata?: Record<string, unknown>;
  @ApiPropertyOptional({ description: 'The chat as a LID, when known' })
  chatlid?: string;
  @ApiPropertyOptional({ description: 'The kind of message: text, media, poll…' })
  type?: string;
  @ApiPropertyOptional({ description: 'The kind of media: image, video, audio, document, vcard, location, interactive…' })
  mediaType?: string;
  @ApiPropertyOptional({ description: 'The message is pinned in its chat' })
  pinned?: boolean;
  @ApiPropertyOptional({ type: () => MessageCallPeer, description: 'On a call message: the other party, as the instance knows it' })
  callPeer?: MessageCallPeer;
}

/** The `response` of a send: done now, or accepted into the async queue (`async: true`) and sent later. */
@ApiSchema({ name: 'SendOutcome', description: 'What a send did: sent now, queued to be sent later (`async: true`), or a status posted' })
export class SendOutcome {
  @ApiProperty({ enum: ['success'], description: 'Always `success`: a failed send answers an error instead' })
  status!: 'success';
  @ApiProperty({
    enum: ['Message sent successfully', 'Message queued successfully', 'Status sent successfully'],
    description: 'What was done, in words: sent now, accepted into the async queue, or a status posted',
  })
  message!: 'Message sent successfully' | 'Message queued successfully' | 'Status sent successfully';
  @ApiPropertyOptional({ description: '/send/media: the file given as a URL, or where /files serves a base64 upload' })
  fileUrl?: string;
}

/** `POST /send/*`: the Message record of the send, with what was done in `response` (status `Queued` with `async: true`). */
@ApiSchema({ name: 'SentMessage', description: "The send's Message record (status `Queued` with `async: true`), and what was done" })
export class SentMessageResponse extends MessageResponse {
  @ApiProperty({ type: () => SendOutcome, description: 'What was done' })
  response!: SendOutcome;
}

/** A recipient a status left out, and why. */
@ApiSchema({ name: 'StatusDiscardedRecipient', description: 'A recipient the status left out, and why' })
export class StatusDiscardedRecipient {
  @ApiProperty({ description: 'The recipient as given (or as the audience listed it)' })
  input!: string;
  @ApiProperty({
    enum: ['invalid_format', 'lid_unresolved', 'not_on_whatsapp', 'outside_status_audience', 'duplicate'],
    description: 'Why: not a phone number, a LID with no known phone number, not on WhatsApp, outside the audience the status privacy allows, or given twice',
  })
  reason!: string;
}

/** `/send/status`'s `debug`: the audience the status privacy allows, and who of it was chosen or left out (and why). */
@ApiSchema({ name: 'StatusDebug', description: 'The audience the status privacy allows, and who of it was chosen or left out (and why)' })
export class StatusDebug {
  @ApiPropertyOptional({
    enum: ['contacts', 'blacklist', 'whitelist'],
    description: "The account's status privacy: all saved contacts, all but an excluded list, or only an allowed list",
  })
  status_privacy_type?: string;
  @ApiPropertyOptional({ type: 'integer', description: "How many people the status privacy's list names" })
  status_privacy_list_count?: number;
  @ApiPropertyOptional({ type: 'integer', description: "How many of the list's people could not be matched to a phone number" })
  status_privacy_list_unresolved?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many people the status privacy allows' })
  audience_recipient_count?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many contacts the instance knows' })
  total_contacts_in_store?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many of them have a saved (address book) name' })
  contacts_with_full_name?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many of them have only a push name' })
  contacts_with_push_name_only?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many of them have only a business name' })
  contacts_with_business_name_only?: number;
  @ApiPropertyOptional({ description: 'WhatsApp did not answer the status privacy: the default (all saved contacts) was used' })
  used_default_privacy_fallback?: boolean;
  @ApiPropertyOptional({ description: 'Why the status privacy could not be read, when it could not' })
  privacy_lookup_error?: string;
  @ApiPropertyOptional({ description: 'The request named its `recipients`' })
  explicit_recipients?: boolean;
  @ApiPropertyOptional({ type: 'integer', description: 'How many recipients the request named' })
  requested_recipient_count?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many of them were resolved to a WhatsApp account' })
  resolved_recipient_count?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many were left out' })
  discarded_recipient_count?: number;
  @ApiPropertyOptional({ type: () => StatusDiscardedRecipient, isArray: true, description: 'Who was left out, and why' })
  discarded_recipients?: StatusDiscardedRecipient[];
  @ApiPropertyOptional({ type: 'integer', description: 'The cap on the audience (`max_recipients`), when one was given' })
  max_recipients?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'How many recipients the status went to' })
  selected_recipient_count?: number;
  @ApiPropertyOptional({ description: 'The audience was cut to `max_recipients`: the status went to part of it' })
  partial_send?: boolean;
}

/** `POST /send/status`: the status' Message record, its id again as `Id`, and the audience's `debug`. */
@ApiSchema({ name: 'StatusSent', description: "The status' Message record, its id again as `Id`, who it went to (`debug`) and what was done" })
export class StatusSentResponse extends MessageResponse {
  @ApiPropertyOptional({ description: 'The WhatsApp message id (messageid)' })
  Id?: string;
  @ApiPropertyOptional({ type: () => StatusDebug, description: 'The audience, and who of it was chosen or left out (and why)' })
  debug?: StatusDebug;
  @ApiProperty({ type: () => SendOutcome, description: 'What was done' })
  response!: SendOutcome;
}
