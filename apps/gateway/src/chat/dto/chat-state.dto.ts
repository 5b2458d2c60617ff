import { applyDecorators } from '@nestjs/common';
import { IsBoolean, IsDefined, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

/** `number`: an international phone number, a user JID (…@s.whatsapp.net, …@lid) or a group JID (…@g.us). */
const ChatNumber = (): PropertyDecorator =>
  applyDecorators(IsDefined({ message: 'number is required' }), IsString({ message: 'number must be a string' }), MaxLength(200));

const RequiredFlag = (field: string): PropertyDecorator =>
  applyDecorators(IsDefined({ message: `${field} is required` }), IsBoolean({ message: `${field} must be a boolean` }));

const Flag = (field: string): PropertyDecorator => applyDecorators(IsOptional(), IsBoolean({ message: `${field} must be a boolean` }));

/** `POST /chat/pin`: true pins the chat at the top of the chat list, false unpins it. */
export class ChatPinDto {
  @JSONSchema({ description: 'The chat: a phone number in international format, or a user or group JID' })
  @ChatNumber()
  number!: string;
  @JSONSchema({ description: 'Pin (true) or unpin (false)' })
  @RequiredFlag('pin')
  pin!: boolean;
}

/** `POST /chat/archive`: true moves the chat to the archived chats, false brings it back. */
export class ChatArchiveDto {
  @JSONSchema({ description: 'The chat: a phone number in international format, or a user or group JID' })
  @ChatNumber()
  number!: string;
  @JSONSchema({ description: 'Archive (true) or unarchive (false)' })
  @RequiredFlag('archive')
  archive!: boolean;
}

/** `POST /chat/read`: true marks the chat read (no unread count), false marks it unread. */
export class ChatReadDto {
  @JSONSchema({ description: 'The chat: a phone number in international format, or a user or group JID' })
  @ChatNumber()
  number!: string;
  @JSONSchema({ description: 'Mark read (true) or unread (false)' })
  @RequiredFlag('read')
  read!: boolean;
}

/** Hours a chat stays muted: 0 unmutes, -1 mutes for ever. */
export const MUTE_HOURS = [0, 8, 168, -1] as const;

/** `POST /chat/mute`: mutes the chat's notifications for 8 hours, a week (168), for ever (-1), or unmutes it (0). */
export class ChatMuteDto {
  @JSONSchema({ description: 'The chat: a phone number in international format, or a user or group JID' })
  @ChatNumber()
  number!: string;
  @IsDefined({ message: 'muteEndTime is required' })
  @IsIn(MUTE_HOURS, { message: 'muteEndTime must be one of 0, 8, 168, -1' })
  @JSONSchema({ description: 'Hours to mute: 8, 168 (a week), -1 (for ever), or 0 to unmute' })
  muteEndTime!: number;
}

/** `POST /chat/delete`: any combination; when both WhatsApp flags are set, clearing wins. */
export class ChatDeleteDto {
  @JSONSchema({ description: 'The chat: a phone number in international format, or a user or group JID' })
  @ChatNumber()
  number!: string;
  /** Deletes the chat's stored row. */
  @JSONSchema({ description: "Delete the chat from the gateway's database" })
  @Flag('deleteChatDB')
  deleteChatDB?: boolean;
  /** Deletes the chat's stored messages. */
  @JSONSchema({ description: "Delete the chat's messages from the gateway's database" })
  @Flag('deleteMessagesDB')
  deleteMessagesDB?: boolean;
  /** Deletes the chat from the phone's chat list (a group's is only cleared). */
  @JSONSchema({ description: 'Delete the chat on WhatsApp (a group is only cleared)' })
  @Flag('deleteChatWhatsApp')
  deleteChatWhatsApp?: boolean;
  /** Clears the chat's messages on the phone, keeping the chat. */
  @JSONSchema({ description: "Clear the chat's messages on WhatsApp without leaving it (wins over `deleteChatWhatsApp`)" })
  @Flag('clearChatWhatsApp')
  clearChatWhatsApp?: boolean;
}

/** `POST /chat/ephemeral`: disappearing messages of a 1:1 chat; `duration` 0 / off, 1d, 7d or 90d (or those in seconds). */
export class ChatEphemeralDto {
  @JSONSchema({ description: 'The private chat' })
  @ChatNumber()
  number!: string;
  @IsDefined({ message: 'duration is required' })
  @JSONSchema({ description: 'The timer: `0` or `off`, `1d`, `7d` or `90d` (or those in seconds)', example: '7d' })
  duration!: string | number;
}

/** `POST /chat/notes`: the chat's note as stored. */
export class ChatNotesDto {
  @JSONSchema({ description: "The chat's JID or number" })
  @ChatNumber()
  number!: string;
}

/** `POST /chat/notes/refresh`: read the note from WhatsApp first; `force` asks for the whole collection again (its snapshot). */
export class ChatNotesRefreshDto {
  @JSONSchema({ description: "The chat's JID or number" })
  @ChatNumber()
  number!: string;
  @JSONSchema({ description: 'Try false first; true does a heavier, complete reread of the notes' })
  @Flag('force')
  force?: boolean;
}

/** Longest note the API writes. */
export const MAX_NOTE_LENGTH = 4096;

/** `POST /chat/notes/edit`: `notes` is the chat's note from now on; '' removes it. */
export class ChatNotesEditDto {
  @JSONSchema({ description: "The chat's JID or number" })
  @ChatNumber()
  number!: string;
  @IsDefined({ message: 'notes is required' })
  @IsString({ message: 'notes must be a string' })
  @MaxLength(MAX_NOTE_LENGTH, { message: `notes must be at most ${MAX_NOTE_LENGTH} characters` })
  @JSONSchema({ description: 'The notes to keep on the chat; an empty string clears them' })
  notes!: string;
}
