import type { BinaryNode } from '../baileys';
import { mergeQuickReplies, readQuickReplies } from './quick-replies';

const reply = (id: string, shortcut: string, timestamp: number, deleted = false) => ({
  index: ['quick_reply', id],
  syncAction: { value: { timestamp, quickReplyAction: { shortcut, message: `${shortcut}!`, keywords: [], deleted } } },
});

/** A3: quick replies live in `regular` (WAWebQuickRepliesSync) and, from 2023-era clients, `regular_low` (docs/protocol.md, checked 2026-12-02). */
describe('quick replies', () => {
  it('should ask both collections, the current one first, with the app-state sync node', async () => {
    const sent: BinaryNode[] = [];
    const socket = {
      authState: { creds: { myAppStateKeyId: 'K' }, keys: { get: async () => ({}) } },
      query: async (node: BinaryNode) => {
        sent.push(node);
        return { tag: 'iq', attrs: { type: 'result' }, content: [{ tag: 'sync', attrs: {}, content: [] }] };
      },
    };
    await expect(readQuickReplies(socket as never)).resolves.toEqual([]);
    expect(sent.map((node) => node.content)).toEqual(
      ['regular', 'regular_low'].map((name) => [
        { tag: 'sync', attrs: {}, content: [{ tag: 'collection', attrs: { name, version: '0', return_snapshot: 'true' } }] },
      ]),
    );
  });

  it('should keep replies from regular_low, the later mutation of an index winning across collections', () => {
    const regular = [reply('100', 'oi', 5), reply('200', 'gone', 9, true)];
    const regularLow = [reply('300', 'velha', 1), reply('200', 'gone', 2), reply('100', 'older', 4)];
    expect(mergeQuickReplies([regular, regularLow])).toEqual([
      { waId: '100', shortcut: 'oi', message: 'oi!', keywords: [] },
      { waId: '300', shortcut: 'velha', message: 'velha!', keywords: [] },
    ]);
  });
});
