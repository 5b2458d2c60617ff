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
