import type { proto } from '@whiskeysockets/baileys';
import { getContentType, normalizeMessageContent } from '@whiskeysockets/baileys';

const USER_CHAT = /@(s\.whatsapp\.net|lid)$/;

/**
 * The disappearing-messages timer of each 1:1 chat a worker sends to: every message into such a chat
 * carries it (`contextInfo.expiration`), as WhatsApp's apps send them, or it would not disappear. Read
 * from the store once per chat, then kept by the changes this worker makes (`/chat/ephemeral`) or
 * sees (the contact's or the phone's change, after it is stored). Groups carry theirs in WhatsApp's
 * group metadata (Baileys adds it).
 */
export class ChatTimers {
  private readonly known = new Map<string, number>();

  /** The chat's timer in seconds (0: off); `load` reads it from the store when it is not known yet. */
  async of(instanceId: string, chatJid: string, load: () => Promise<number>): Promise<number> {
    if (!USER_CHAT.test(chatJid)) return 0;
    const key = `${instanceId}\u0000${chatJid}`;
    const known = this.known.get(key);
    if (known !== undefined) return known;
    const seconds = await load();
    this.known.set(key, seconds);
    return seconds;
  }

  set(instanceId: string, chatJid: string, seconds: number): void {
    this.known.set(`${instanceId}\u0000${chatJid}`, seconds);
  }

  /** A timer of the instance changed where its JID form is not certain: read them again. */
  forget(instanceId: string): void {
    for (const key of this.known.keys()) if (key.startsWith(`${instanceId}\u0000`)) this.known.delete(key);
  }
}

/** The one table of the worker process (sends, chat ops and inbound events of an instance share it). */
export const chatTimers = new ChatTimers();

/** Puts the chat's timer in a built message's content (inside its envelopes), as sendMessage's `ephemeralExpiration` does. */
export function withExpiration(message: proto.IMessage, seconds: number): void {
  const inner = normalizeMessageContent(message);
  const field = inner ? getContentType(inner) : undefined;
  if (!inner || !field || field === 'protocolMessage') return;
  const body = (inner as Record<string, unknown>)[field];
  if (!body || typeof body !== 'object') return;
  const target = body as { contextInfo?: proto.IContextInfo | null };
  target.contextInfo = { ...(target.contextInfo ?? {}), expiration: seconds };
}
