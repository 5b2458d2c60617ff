import { proto } from '../baileys';
import type { BinaryNode } from '../baileys';
import { writeNote } from './chat-notes';

/** A2, pinned as docs/protocol.md references it (WA Web WAWebNoteSync; whatsmeow appstate/keys.go:60; checked 2026-12-02). */
describe('chat notes', () => {
  it('A2 should write a note as WA Web does: regular_low, index note_edit, version 7, an unstructured noteEditAction', async () => {
    const patches: unknown[] = [];
    const socket = {
      authState: { creds: { myAppStateKeyId: 'K' }, keys: { get: async () => ({}) } },
      query: async (): Promise<BinaryNode> => ({ tag: 'iq', attrs: { type: 'result' }, content: [{ tag: 'sync', attrs: {}, content: [] }] }),
      appPatch: async (patch: unknown) => {
        patches.push(patch);
      },
    };
    const note = await writeNote(socket as never, ['5511999999999@s.whatsapp.net'], 'cliente VIP');
    expect(patches).toEqual([
      {
        type: 'regular_low',
        index: ['note_edit', note.noteId],
        apiVersion: 7,
        operation: proto.SyncdMutation.SyncdOperation.SET,
        syncAction: {
          timestamp: expect.any(Number),
          noteEditAction: {
            type: proto.SyncActionValue.NoteEditAction.NoteType.UNSTRUCTURED,
            chatJid: '5511999999999@s.whatsapp.net',
            createdAt: note.createdAt,
            deleted: false,
            unstructuredContent: 'cliente VIP',
          },
        },
      },
    ]);
  });
});
