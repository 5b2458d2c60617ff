import { ErrorCode, type InstanceRpc } from '@gw/contracts';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { Session } from '../session/session';
import { noteOf, noteOfChat } from '../messaging/chat-notes';
import { chatOps, chatRequests } from './chat.ops';

type ChatModifyRequest = InstanceRpc['chat.modify']['request'];

/** A session whose socket's chatModify does `modify`, and an inbound handler that records the chat changes it is told. */
function harness(modify: () => Promise<void>) {
  const calls: unknown[][] = [];
  const changes: unknown[] = [];
  const socket = {
    chatModify: async (...args: unknown[]) => {
      calls.push(args);
      await modify();
    },
  };
  const handler = { idle: async () => undefined, chatChanged: async (update: unknown) => void changes.push(update) };
  const inbound = { handlerFor: () => handler } as unknown as InboundMessageObserver;
  const session = { instanceId: 'i1', openSocket: () => socket } as unknown as Session;
  return { ops: chatOps(inbound), session, calls, changes };
}

const request = (action: ChatModifyRequest['action'], extra: Partial<ChatModifyRequest> = {}): ChatModifyRequest => ({
  instanceId: 'i1',
  chatJid: '5511999999999@s.whatsapp.net',
  action,
  lastMessages: [],
  ...extra,
});

describe('chat.modify', () => {
  it('should hand Baileys the chat modification and store what WhatsApp took', async () => {
    const { ops, session, calls, changes } = harness(async () => undefined);
    const last = [{ key: { remoteJid: '5511999999999@s.whatsapp.net', id: 'M1', fromMe: false }, messageTimestamp: 1_700_000_000 }];
    await expect(ops['chat.modify'](session, request('archive', { lastMessages: last }))).resolves.toEqual({ ok: true });
    await ops['chat.modify'](session, request('mute', { muteEndTime: -1 }));
    await ops['chat.modify'](session, request('unread', { lastMessages: last }));
    await ops['chat.modify'](session, request('delete', { lastMessages: last }));
    expect(calls).toEqual([
      [{ archive: true, lastMessages: last }, '5511999999999@s.whatsapp.net'],
      [{ mute: -1 }, '5511999999999@s.whatsapp.net'],
      [{ markRead: false, lastMessages: last }, '5511999999999@s.whatsapp.net'],
      [{ delete: true, lastMessages: last }, '5511999999999@s.whatsapp.net'],
    ]);
    expect(changes).toEqual([
      { id: '5511999999999@s.whatsapp.net', archived: true },
      { id: '5511999999999@s.whatsapp.net', muteEndTime: -1 },
      { id: '5511999999999@s.whatsapp.net', unreadCount: -1 },
    ]);
  });

  it('should answer Conflict while the app-state key has not arrived (history sync)', async () => {
    const { ops, session, changes } = harness(async () => {
      throw Object.assign(new Error('App state key not present!'), { isBoom: true, output: { statusCode: 400 } });
    });
    await expect(ops['chat.modify'](session, request('pin'))).rejects.toMatchObject({
      code: ErrorCode.Conflict,
      message: 'history sync still in progress, try again later',
    });
    expect(changes).toEqual([]);
  });

  it('should answer Refused when WhatsApp answers the patch with an error', async () => {
    const { ops, session } = harness(async () => {
      throw Object.assign(new Error('internal-server-error'), { isBoom: true, data: 500 });
    });
    await expect(ops['chat.modify'](session, request('pin'))).rejects.toMatchObject({
      code: ErrorCode.Refused,
      message: 'WhatsApp refused the chat change (500): internal-server-error',
    });
  });

  it('should refuse a malformed request before it reaches Baileys', () => {
    const parse = chatRequests['chat.modify'];
    expect(parse({ chatJid: '5511999999999@s.whatsapp.net', action: 'pin' }, 'i1')).toEqual({
      instanceId: 'i1',
      chatJid: '5511999999999@s.whatsapp.net',
      action: 'pin',
      muteEndTime: undefined,
      lastMessages: [],
    });
    const bad = expect.objectContaining({ code: ErrorCode.BadRequest });
    expect(() => parse({ chatJid: 'x', action: 'pin' }, 'i1')).toThrow(bad);
    expect(() => parse({ chatJid: '5511999999999@s.whatsapp.net', action: 'explode' }, 'i1')).toThrow(bad);
    expect(() => parse({ chatJid: '5511999999999@s.whatsapp.net', action: 'mute', muteEndTime: -5 }, 'i1')).toThrow(bad);
    expect(() => parse({ chatJid: '5511999999999@s.whatsapp.net', action: 'read', lastMessages: [{ key: { id: 'M1' } }] }, 'i1')).toThrow(bad);
  });
});

describe('chat.picture', () => {
  const sessionWith = (profilePictureUrl: () => Promise<string | undefined>) =>
    ({ instanceId: 'i1', openSocket: () => ({ profilePictureUrl }) }) as unknown as Session;
  const ops = chatOps({ handlerFor: () => null } as unknown as InboundMessageObserver);
  const request = { instanceId: 'i1', chatJid: '5511999999999@s.whatsapp.net', type: 'image' as const };

  it('should answer the URL WhatsApp serves, and none when it has no picture or hides it', async () => {
    await expect(
      ops['chat.picture'](
        sessionWith(async () => 'https://pps.whatsapp.net/x.jpg'),
        request,
      ),
    ).resolves.toEqual({ url: 'https://pps.whatsapp.net/x.jpg' });
    for (const data of [404, 401])
      await expect(
        ops['chat.picture'](
          sessionWith(async () => {
            throw Object.assign(new Error('item-not-found'), { isBoom: true, data });
          }),
          request,
        ),
      ).resolves.toEqual({ url: '' });
  });

  it('should answer Refused for another refusal, and refuse a malformed request', async () => {
    const refused = sessionWith(async () => {
      throw Object.assign(new Error('internal-server-error'), { isBoom: true, data: 500 });
    });
    await expect(ops['chat.picture'](refused, request)).rejects.toMatchObject({ code: ErrorCode.Refused });
    const parse = chatRequests['chat.picture'];
    expect(parse({ chatJid: '120363000000000001@g.us', type: 'preview' }, 'i1')).toEqual({
      instanceId: 'i1',
      chatJid: '120363000000000001@g.us',
      type: 'preview',
    });
    expect(() => parse({ chatJid: 'nope' }, 'i1')).toThrow(expect.objectContaining({ code: ErrorCode.BadRequest }));
  });
});

describe('chat notes (app state note_edit)', () => {
  it('should read a note_edit mutation as the chat note, a deleted one as empty, and ignore other mutations', () => {
    const mutation = (index: string[], noteEditAction?: Record<string, unknown>) => ({
      index,
      syncAction: { value: noteEditAction ? { noteEditAction } : {} },
    });
    expect(noteOf(mutation(['note_edit', 'N1'], { chatJid: '5511999999999@s.whatsapp.net', unstructuredContent: 'ligar', createdAt: 5 }))).toEqual({
      chatJid: '5511999999999@s.whatsapp.net',
      noteId: 'N1',
      text: 'ligar',
      deleted: false,
      createdAt: 5,
    });
    expect(noteOf(mutation(['note_edit', 'N1'], { chatJid: '5511999999999@s.whatsapp.net', unstructuredContent: 'x', deleted: true }))).toMatchObject({
      text: '',
      deleted: true,
    });
    expect(noteOf(mutation(['pin_v1', '5511999999999@s.whatsapp.net']))).toBeNull();
  });

  it('should pick the newest note of the chat by any of its JIDs', () => {
    const note = (chatJid: string, createdAt: number, text: string) => ({ chatJid, noteId: text, text, deleted: false, createdAt });
    const notes = [note('1@lid', 10, 'old'), note('5511999999999@s.whatsapp.net', 20, 'new'), note('other@lid', 30, 'other')];
    expect(noteOfChat(notes, ['5511999999999@s.whatsapp.net', '1@lid'])?.text).toBe('new');
    expect(noteOfChat(notes, ['2@lid'])).toBeNull();
  });
});

describe('chat.notes.read / chat.notes.edit', () => {
  const handler = { idle: async () => undefined };
  const ops = chatOps({ handlerFor: () => handler } as unknown as InboundMessageObserver);
  const before = (query: () => Promise<unknown>) =>
    ({ instanceId: 'i1', openSocket: () => ({ authState: { creds: {}, keys: { get: async () => ({}) } }, query, appPatch: query }) }) as unknown as Session;
  const chatJids = ['5511999999999@s.whatsapp.net'];

  it('should answer 409 history sync still in progress while the phone has not shared the app-state key, asking WhatsApp nothing', async () => {
    const asked: unknown[] = [];
    const session = before(async () => void asked.push(1));
    const conflict = { code: ErrorCode.Conflict, message: 'history sync still in progress, try again in a moment' };
    await expect(ops['chat.notes.read'](session, { instanceId: 'i1', chatJids, force: false })).rejects.toMatchObject(conflict);
    await expect(ops['chat.notes.edit'](session, { instanceId: 'i1', chatJids, text: 'x' })).rejects.toMatchObject(conflict);
    expect(asked).toEqual([]);
  });

  it('should refuse a request naming no user chat or with no text', () => {
    const bad = expect.objectContaining({ code: ErrorCode.BadRequest });
    expect(() => chatRequests['chat.notes.read']({ chatJids: ['120363000000000001@g.us'] }, 'i1')).toThrow(bad);
    expect(() => chatRequests['chat.notes.read']({ chatJids: [] }, 'i1')).toThrow(bad);
    expect(() => chatRequests['chat.notes.edit']({ chatJids, text: 5 }, 'i1')).toThrow(bad);
    expect(chatRequests['chat.notes.edit']({ chatJids, text: '' }, 'i1')).toEqual({ instanceId: 'i1', chatJids, text: '' });
  });
});
