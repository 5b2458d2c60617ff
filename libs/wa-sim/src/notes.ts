// Chat notes of WhatsApp Business: app-state `note_edit` mutations (index ['note_edit', noteId],
// SyncActionValue.noteEditAction, action version 7) in `regular_low`, as WhatsApp Web writes them.
// The phone's notes are what those mutations, its own and its devices', leave; the phone writes
// notes with the same mutation, so a linked device sees them on its next sync.
import { randomBytes } from 'crypto';
import { decodeAppState, phoneAppPatch } from './app-state';
import type { Account } from './accounts';
import { proto } from './baileys';

export const NOTES_COLLECTION = 'regular_low';

export interface PhoneNote {
  noteId: string;
  chatJid: string;
  /** '' once deleted. */
  text: string;
  deleted: boolean;
  createdAt: number;
}

/** The phone's notes, one per note id, as the account's mutations left them (in the order they were made). */
export async function phoneNotes(account: Account): Promise<PhoneNote[]> {
  const notes = new Map<string, PhoneNote>();
  const collection = (await decodeAppState(account))[NOTES_COLLECTION];
  for (const mutation of collection?.mutations ?? []) {
    const index = typeof mutation.index === 'string' ? (JSON.parse(mutation.index) as unknown) : mutation.index;
    if (!Array.isArray(index) || index[0] !== 'note_edit' || typeof index[1] !== 'string') continue;
    const action = (mutation.action?.noteEditAction ?? {}) as {
      chatJid?: string;
      unstructuredContent?: string;
      deleted?: boolean;
      createdAt?: string | number;
    };
    if (mutation.operation === 'remove') {
      notes.delete(index[1]);
      continue;
    }
    const deleted = action.deleted === true;
    notes.set(index[1], {
      noteId: index[1],
      chatJid: action.chatJid ?? '',
      text: deleted ? '' : (action.unstructuredContent ?? ''),
      deleted,
      createdAt: Number(action.createdAt ?? 0),
    });
  }
  return [...notes.values()];
}

/**
 * The phone writes the note of a chat: its current note there is edited (same id), else a new one is
 * made; '' deletes it. Returns the collection that changed, for `server_sync`.
 */
export async function phoneWriteNote(account: Account, chatJid: string, text: string): Promise<{ name: string; version: number; note: PhoneNote }> {
  const current = (await phoneNotes(account)).filter((note) => note.chatJid === chatJid).at(-1);
  const deleted = text === '';
  const note: PhoneNote = {
    noteId: current?.noteId ?? randomBytes(16).toString('hex').toUpperCase(),
    chatJid,
    text,
    deleted,
    createdAt: current?.createdAt || Date.now(),
  };
  const changed = await phoneAppPatch(account, {
    type: NOTES_COLLECTION,
    index: ['note_edit', note.noteId],
    apiVersion: 7,
    operation: proto.SyncdMutation.SyncdOperation.SET,
    syncAction: {
      timestamp: Date.now(),
      noteEditAction: {
        type: proto.SyncActionValue.NoteEditAction.NoteType.UNSTRUCTURED,
        chatJid,
        createdAt: note.createdAt,
        deleted,
        unstructuredContent: text,
      },
    },
  });
  return { ...changed, note };
}
