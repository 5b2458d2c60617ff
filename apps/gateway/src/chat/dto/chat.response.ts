import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ChatResponse } from '../../common/dto/chat.response';

/** `POST /chat/labels`. */
@ApiSchema({ name: 'ChatLabels', description: "A chat's labels changed" })
export class ChatLabelsResponse {
  @ApiProperty({
    enum: ['Labels updated successfully', 'Label added to chat', 'Label removed from chat'],
    description: 'What was done: the whole list set (`labelids`), one label added or one removed',
  })
  response!: 'Labels updated successfully' | 'Label added to chat' | 'Label removed from chat';
  @ApiPropertyOptional({ type: [String], description: '`labelids`: each label added or removed to reach the list, in words' })
  editions?: string[];
}

/** `POST /chat/delete`: what was done, and what failed (WhatsApp's part when stored data went too). */
@ApiSchema({ name: 'ChatDeleted', description: 'A chat deleted or cleared: what was done, and what failed' })
export class ChatDeletedResponse {
  @ApiProperty({ description: 'That the deletion ran', example: 'Chat deletion process completed' })
  response!: string;
  @ApiProperty({ type: [String], description: 'Each thing done, in words (on WhatsApp, in the database)' })
  actions!: string[];
  @ApiProperty({ type: [String], description: 'Each thing that failed, in words (empty when none did)' })
  errors!: string[];
}

/** `GET /chat/blocklist`, and `POST /chat/block` with its `response`. */
@ApiSchema({ name: 'Blocklist', description: 'The contacts the account has blocked (after a block or unblock, with what was done)' })
export class BlocklistResponse {
  @ApiPropertyOptional({ enum: ['Blocked successfully', 'Unblocked successfully'], description: '`POST /chat/block`: what was done' })
  response?: 'Blocked successfully' | 'Unblocked successfully';
  @ApiProperty({ type: [String], description: 'The blocked contacts, as `number@s.whatsapp.net`' })
  blockList!: string[];
}

/** `POST /chat/ephemeral`'s timer. */
@ApiSchema({ name: 'EphemeralTimer', description: "A chat's disappearing-messages timer" })
export class EphemeralTimer {
  @ApiProperty({ description: 'Messages disappear' })
  enabled!: boolean;
  @ApiProperty({ type: 'integer', description: 'After how long, in seconds (0: off)' })
  seconds!: number;
  @ApiProperty({ enum: ['off', '1d', '7d', '90d'], description: 'The same, as the duration named' })
  label!: string;
}

/** `POST /chat/ephemeral`. */
@ApiSchema({ name: 'ChatEphemeral', description: "A private chat's disappearing-messages timer set" })
export class ChatEphemeralResponse {
  @ApiProperty({ enum: ['Ephemeral timer updated successfully'], description: 'What was done' })
  response!: 'Ephemeral timer updated successfully';
  @ApiProperty({ type: () => ChatResponse, nullable: true, description: 'The chat after the change (null when it is not stored)' })
  chat!: ChatResponse | null;
  @ApiProperty({ type: () => EphemeralTimer, description: 'The timer now' })
  ephemeral!: EphemeralTimer;
}

/** `POST /chat/notes` and `/chat/notes/refresh`: the chat's note (WhatsApp Business) and where it was read. */
@ApiSchema({ name: 'ChatNotes', description: "A chat's internal notes (WhatsApp Business), and where they were read" })
export class ChatNotesResponse {
  @ApiProperty({ type: () => ChatResponse, description: 'The chat' })
  chat!: ChatResponse;
  @ApiProperty({ description: "The chat's notes" })
  wa_notes!: string;
  @ApiProperty({ enum: ['local', 'appstate_reload'], description: "`local`: as stored; `appstate_reload`: read again from WhatsApp's app state" })
  source!: 'local' | 'appstate_reload';
}

/** `POST /chat/notes/edit`: the note as written to WhatsApp and stored. */
@ApiSchema({ name: 'ChatNotesEdited', description: "A chat's notes written to WhatsApp and stored" })
export class ChatNotesEditedResponse {
  @ApiProperty({ enum: ['Chat notes updated'], description: 'What was done' })
  response!: 'Chat notes updated';
  @ApiProperty({ type: () => ChatResponse, description: 'The chat after the change' })
  chat!: ChatResponse;
  @ApiProperty({ description: "The chat's notes now" })
  wa_notes!: string;
  @ApiProperty({ enum: ['api'], description: 'Always `api`: written through the API' })
  source!: 'api';
}
