import { applyDecorators } from '@nestjs/common';
import { IsBoolean, IsDefined, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';

/** `number`: an international phone number, a user JID (…@s.whatsapp.net, …@lid) or a group JID (…@g.us). */
const ChatNumber = (): PropertyDecorator =>
  applyDecorators(IsDefined({ message: 'number is required' }), IsString({ message: 'number must be a string' }), MaxLength(200));

const RequiredFlag = (field: string): PropertyDecorator =>
  applyDecorators(IsDefined({ message: `${field} is required` }), IsBoolean({ message: `${field} must be a boolean` }));

const Flag = (field: string): PropertyDecorator => applyDecorators(IsOptional(), IsBoolean({ message: `${field} must be a boolean` }));

/** `POST /chat/pin`: true pins the chat at the top of the chat list, false unpins it. */
export class ChatPinDto {
  @ChatNumber() number!: string;
  @RequiredFlag('pin') pin!: boolean;
}

/** `POST /chat/archive`: true moves the chat to the archived chats, false brings it back. */
export class ChatArchiveDto {
  @ChatNumber() number!: string;
  @RequiredFlag('archive') archive!: boolean;
}

/** `POST /chat/read`: true marks the chat read (no unread count), false marks it unread. */
export class ChatReadDto {
  @ChatNumber() number!: string;
  @RequiredFlag('read') read!: boolean;
}

/** Hours a chat stays muted: 0 unmutes, -1 mutes for ever. */
export const MUTE_HOURS = [0, 8, 168, -1] as const;

/** `POST /chat/mute`: mutes the chat's notifications for 8 hours, a week (168), for ever (-1), or unmutes it (0). */
export class ChatMuteDto {
  @ChatNumber() number!: string;
  @IsDefined({ message: 'muteEndTime is required' })
  @IsIn(MUTE_HOURS, { message: 'muteEndTime must be one of 0, 8, 168, -1' })
  muteEndTime!: number;
}

/** `POST /chat/delete`: any combination; when both WhatsApp flags are set, clearing wins. */
export class ChatDeleteDto {
  @ChatNumber() number!: string;
  /** Deletes the chat's stored row. */
  @Flag('deleteChatDB') deleteChatDB?: boolean;
  /** Deletes the chat's stored messages. */
  @Flag('deleteMessagesDB') deleteMessagesDB?: boolean;
  /** Deletes the chat from the phone's chat list (a group's is only cleared). */
  @Flag('deleteChatWhatsApp') deleteChatWhatsApp?: boolean;
  /** Clears the chat's messages on the phone, keeping the chat. */
  @Flag('clearChatWhatsApp') clearChatWhatsApp?: boolean;
}

/** `POST /chat/ephemeral`: disappearing messages of a 1:1 chat; `duration` 0 / off, 1d, 7d or 90d (or those in seconds). */
export class ChatEphemeralDto {
  @ChatNumber() number!: string;
  @IsDefined({ message: 'duration is required' })
  duration!: string | number;
}

/** `POST /chat/notes`: the chat's note as stored. */
export class ChatNotesDto {
  @ChatNumber() number!: string;
}

/** `POST /chat/notes/refresh`: read the note from WhatsApp first; `force` asks for the whole collection again (its snapshot). */
export class ChatNotesRefreshDto {
  @ChatNumber() number!: string;
  @Flag('force') force?: boolean;
}

/** Longest note the API writes. */
export const MAX_NOTE_LENGTH = 4096;

/** `POST /chat/notes/edit`: `notes` is the chat's note from now on; '' removes it. */
export class ChatNotesEditDto {
  @ChatNumber() number!: string;
  @IsDefined({ message: 'notes is required' })
  @IsString({ message: 'notes must be a string' })
  @MaxLength(MAX_NOTE_LENGTH, { message: `notes must be at most ${MAX_NOTE_LENGTH} characters` })
  notes!: string;
}
