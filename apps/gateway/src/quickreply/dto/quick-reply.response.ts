import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/**
 * A stored quick reply (`/quickreply/*`, `GET /quick-replies/{id}`): the seed's record (`message` with its
 * kind, `createdAt`, `updatedAt`) and the reference's flat fields beside it (`type`, `text`, `file`,
 * `docName`, `owner`, `created`, `updated`), so clients of either version read it.
 */
@ApiSchema({ name: 'QuickReply', description: 'A quick reply: a canned answer a front end offers, stored per instance' })
export class QuickReplyResponse {
  @ApiProperty({ description: "The quick reply's id", example: 'rb9da9c03637452' })
  id!: string;
  @ApiProperty({ description: 'The shortcut that finds the reply', example: 'saudacao1' })
  shortCut!: string;
  @ApiProperty({ description: 'Reserved for automated support; empty by default' })
  aiDescription!: string;
  @ApiProperty({
    description:
      'Also in the WhatsApp Business app (text only): synced from the phone, or created there by the API with onWhatsApp: true (no id); edits and deletions here follow it there',
  })
  onWhatsApp!: boolean;
  @ApiProperty({
    type: 'object',
    required: ['kind'],
    properties: {
      kind: { type: 'string', enum: ['text', 'media', 'contact', 'location', 'menu', 'pix'], description: "The message's kind" },
      file: { type: 'string', description: 'media: the URL as sent, or where /files serves a stored base64 upload' },
    },
    additionalProperties: true,
    description: "The body of the kind's send endpoint without `number` and the send-control fields",
  })
  message!: Record<string, unknown>;
  @ApiProperty({ format: 'date-time', description: 'When the reply was created' })
  createdAt!: string;
  @ApiProperty({ format: 'date-time', description: 'When the reply last changed' })
  updatedAt!: string;
  @ApiProperty({ description: '`text`, the media type, or the kind of the other messages (contact, location, menu, pix)' })
  type!: string;
  @ApiProperty({ description: "The text, or a media message's caption ('' for the kinds without one)" })
  text!: string;
  @ApiProperty({ description: 'media: as message.file ("" otherwise)' })
  file!: string;
  @ApiProperty({ description: 'A document\'s file name ("" otherwise)' })
  docName!: string;
  @ApiProperty({ description: "The instance's phone number ('' before it is paired)" })
  owner!: string;
  @ApiProperty({ format: 'date-time', description: 'As createdAt' })
  created!: string;
  @ApiProperty({ format: 'date-time', description: 'As updatedAt' })
  updated!: string;
}

/** `POST /quickreply/edit`: what was done, the reply created or updated, and all of the instance's replies. */
@ApiSchema({ name: 'QuickReplyEdited', description: "What was done, the reply created or updated, and all of the instance's replies" })
export class QuickReplyEditedResponse {
  @ApiProperty({ enum: ['Quick reply created', 'Quick reply updated', 'Quick reply deleted'], description: 'What was done, in words' })
  message!: 'Quick reply created' | 'Quick reply updated' | 'Quick reply deleted';
  @ApiPropertyOptional({ type: () => QuickReplyResponse, description: 'The reply created or updated (absent after a deletion)' })
  quickReply?: QuickReplyResponse;
  @ApiProperty({ type: () => QuickReplyResponse, isArray: true, description: "All of the instance's replies, oldest first" })
  quickReplies!: QuickReplyResponse[];
}
