/** A message of the chat as WhatsApp's app state names it: an archive, read mark, clear or delete covers the chat up to it. */
export interface ChatLastMessage {
  key: { remoteJid: string; id: string; fromMe: boolean; participant?: string };
  /** Seconds since the epoch. */
  messageTimestamp: number;
}

/** What the phone's chat list is told about a chat (Baileys' chatModify). */
export const CHAT_MODIFY_ACTIONS = ['pin', 'unpin', 'archive', 'unarchive', 'mute', 'unmute', 'read', 'unread', 'clear', 'delete'] as const;
export type ChatModifyAction = (typeof CHAT_MODIFY_ACTIONS)[number];

/**
 * An app-state change of one chat, answered once the resulting `chats.update` is stored. `muteEndTime`
 * (ms since the epoch, -1 forever) only with `mute`; `lastMessages` (newest last) for archive, read,
 * clear and delete.
 */
export interface ChatModifyRequest {
  instanceId: string;
  chatJid: string;
  action: ChatModifyAction;
  muteEndTime?: number;
  lastMessages: ChatLastMessage[];
}

/**
 * Disappearing messages of a 1:1 chat: WhatsApp's EPHEMERAL_SETTING protocol message to the contact
 * (Baileys' `disappearingMessagesInChat`). `seconds` 0 turns them off.
 */
export interface ChatEphemeralRequest {
  instanceId: string;
  chatJid: string;
  seconds: number;
}

/** A chat's note (WhatsApp Business), as the app state keeps it (`note_edit` in `regular_low`). */
export interface ChatNote {
  /** The chat the note is on, as WhatsApp wrote it (a phone JID or a LID). */
  chatJid: string;
  noteId: string;
  /** '' once deleted. */
  text: string;
  deleted: boolean;
  /** ms since the epoch. */
  createdAt: number;
}

/** Reads the notes of a chat (known by any of `chatJids`: its number and LID) from WhatsApp's app state; `force` asks for the collection's snapshot. */
export interface ChatNotesReadRequest {
  instanceId: string;
  chatJids: string[];
  force: boolean;
}

/** Writes the note of a chat (known by any of `chatJids`; the first names a new note); '' deletes it. */
export interface ChatNoteEditRequest {
  instanceId: string;
  chatJids: string[];
  text: string;
}

/** The picture of a chat (a contact or a group) as WhatsApp serves it now: the full image or the small preview. */
export interface ChatPictureRequest {
  instanceId: string;
  chatJid: string;
  type: 'image' | 'preview';
}
