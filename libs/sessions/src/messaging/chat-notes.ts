import { randomBytes } from 'node:crypto';
import { ErrorCode, RpcError, type InstanceRpc } from '@gw/contracts';
import { proto, toNumber } from '@whiskeysockets/baileys';
import type { ChatMutation, LTHashState, WASocket } from '@whiskeysockets/baileys';
import { readAppStateCollection } from './app-state-collection';

/**
 * Chat notes of WhatsApp Business: app-state `note_edit` mutations (index `['note_edit', noteId]`,
 * `SyncActionValue.noteEditAction {type, chatJid, createdAt, deleted, unstructuredContent}`, action
 * version 7) in the `regular_low` collection, as WhatsApp Web writes them. Baileys decodes that
 * collection but drops the notes (no event), so they are read here with Baileys' own codec, apart
 * from its sync state: reading never moves the versions Baileys keeps.
 */
type ChatNote = InstanceRpc['chat.notes.edit']['reply']['note'];

export const NOTES_COLLECTION = 'regular_low';
const NOTE_INDEX = 'note_edit';
const NOTE_ACTION_VERSION = 7;

export const HISTORY_SYNC_CONFLICT = 'history sync still in progress, try again in a moment';

type Socket = Pick<WASocket, 'authState' | 'query' | 'appPatch'>;

/** The app-state key arrives with the history sync: until then nothing can be read or written (409). */
function appStateKeyOf(socket: Socket): void {
  if (!socket.authState.creds.myAppStateKeyId) throw new RpcError(ErrorCode.Conflict, HISTORY_SYNC_CONFLICT);
}

/** The note a mutation carries, or null when it is no note. */
export function noteOf(mutation: Pick<ChatMutation, 'index' | 'syncAction'>): ChatNote | null {
  const [type, noteId] = mutation.index ?? [];
  const action = mutation.syncAction?.value?.noteEditAction;
  if (type !== NOTE_INDEX || typeof noteId !== 'string' || !action?.chatJid) return null;
  const deleted = action.deleted === true;
  return {
    chatJid: action.chatJid,
    noteId,
    text: deleted ? '' : (action.unstructuredContent ?? ''),
    deleted,
    createdAt: toNumber(action.createdAt ?? 0),
  };
}

/** What was read of a socket's collection: the next read without `force` asks only for what came after it. */
interface NotesRead {
  state: LTHashState;
  /** By note id. */
  notes: Map<string, ChatNote>;
}
const reads = new WeakMap<object, NotesRead>();

/**
 * Every note of the account as the collection leaves it (the last mutation of each note wins). The
 * first read of a socket, and every read with `force`, starts from scratch (version 0, with the
 * collection's snapshot, as a full resync does); the others ask only for the patches since the last
 * read. Baileys' own sync state is not touched.
 */
export async function readNotes(socket: Socket, force: boolean): Promise<ChatNote[]> {
  appStateKeyOf(socket);
  const previous = force ? undefined : reads.get(socket);
  const notes = new Map(previous?.notes ?? []);
  const state = await readAppStateCollection(socket, NOTES_COLLECTION, previous?.state, {
    snapshot: () => notes.clear(),
    take: (mutations) => {
      for (const mutation of mutations) {
        const note = noteOf(mutation);
        if (note) notes.set(note.noteId, note);
      }
    },
  });
  reads.set(socket, { state, notes });
  return [...notes.values()];
}

/** The note of a chat known by any of `chatJids` (the newest, should there be several); null when it has none. */
export function noteOfChat(notes: ChatNote[], chatJids: string[]): ChatNote | null {
  const mine = notes.filter((note) => chatJids.includes(note.chatJid));
  return mine.sort((a, b) => b.createdAt - a.createdAt)[0] ?? null;
}

/**
 * Writes the chat's note: the note it has is edited (same note id, same chat JID), else a new one is
 * made on `chatJids[0]`. '' deletes it.
 */
export async function writeNote(socket: Socket, chatJids: string[], text: string): Promise<ChatNote> {
  appStateKeyOf(socket);
  const current = noteOfChat(await readNotes(socket, false), chatJids);
  const deleted = text === '';
  const note: ChatNote = {
    chatJid: current?.chatJid ?? chatJids[0],
    noteId: current?.noteId ?? randomBytes(16).toString('hex').toUpperCase(),
    text,
    deleted,
    createdAt: current?.createdAt || Date.now(),
  };
  await socket.appPatch({
    type: NOTES_COLLECTION,
    index: [NOTE_INDEX, note.noteId],
    apiVersion: NOTE_ACTION_VERSION,
    operation: proto.SyncdMutation.SyncdOperation.SET,
    syncAction: {
      timestamp: Date.now(),
      noteEditAction: {
        type: proto.SyncActionValue.NoteEditAction.NoteType.UNSTRUCTURED,
        chatJid: note.chatJid,
        createdAt: note.createdAt,
        deleted,
        unstructuredContent: text,
      },
    },
  });
  return note;
}
