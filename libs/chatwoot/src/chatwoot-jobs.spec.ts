import type { OutboxRow } from '@gw/persistence';
import { intakeOfWebhook, JobKind, jobsOfEvents, lidsOfEvents, replyLayout, whatsappIdsOf } from './chatwoot-jobs';

const event = (id: string, eventType: string, payload: Record<string, unknown>): OutboxRow => ({
  id,
  instanceId: 'rinst',
  eventType,
  chatId: '',
  payload,
  createdAt: new Date(),
});

/** The bridge's inbox in these cases. */
const INBOX = 5;
const intakeOf = (body: Record<string, unknown>) => intakeOfWebhook('rinst', body, INBOX);

/** Chatwoot's `message_created` for an agent's reply (Message#webhook_data), as its API inbox webhook posts it. */
const agentReply = (extra: Record<string, unknown> = {}) => ({
  event: 'message_created',
  id: 41,
  content: 'Olá!',
  message_type: 'outgoing',
  private: false,
  source_id: null,
  content_attributes: {},
  sender: { id: 7, name: 'Ana', available_name: 'Ana Souza', type: 'user' },
  inbox: { id: INBOX, name: 'WhatsApp' },
  conversation: {
    id: 12,
    inbox_id: INBOX,
    status: 'open',
    meta: { sender: { id: 3, phone_number: '+5511999990000', identifier: '5511999990000@s.whatsapp.net' } },
  },
  ...extra,
});

describe('chatwoot jobs', () => {
  describe(jobsOfEvents.name, () => {
    it('should make one job per message event, keyed by the event id, in the lane of its chat', () => {
      const jobs = jobsOfEvents([
        event('10', 'messages', {
          chat: { wa_chatid: '5511@s.whatsapp.net', wa_chatlid: '99@lid', wa_name: 'Bia' },
          message: { messageid: 'ABC', text: 'oi', fromMe: false, sendPayload: { big: true } },
        }),
        event('11', 'messages', { chat: {}, message: {} }),
      ]);
      expect(jobs).toEqual([
        {
          lane: 'wa:5511@s.whatsapp.net',
          kind: JobKind.WaMessage,
          dedupeKey: 'event:10',
          payload: {
            chat: { wa_chatid: '5511@s.whatsapp.net', wa_chatlid: '99@lid', wa_name: 'Bia' },
            message: { messageid: 'ABC', text: 'oi', fromMe: false },
          },
        },
      ]);
    });

    it('should put a chat named by its LID in the lane of its number when the number is known', () => {
      const events = [
        event('20', 'messages', { chat: { wa_chatid: '', wa_chatlid: '77@lid' }, message: { messageid: 'L1' } }),
        event('21', 'messages_update', { type: 'ReadReceipt', state: 'Read', event: { MessageIDs: ['L1'], Chat: '77@lid', IsFromMe: 'True' } }),
        event('22', 'messages', { chat: { wa_chatid: '', wa_chatlid: '88@lid' }, message: { messageid: 'L2' } }),
      ];
      expect(lidsOfEvents(events)).toEqual(['77@lid', '88@lid']);
      const lanes = jobsOfEvents(events, new Map([['77@lid', '5511@s.whatsapp.net']])).map((job) => job.lane);
      expect(lanes).toEqual(['wa:5511@s.whatsapp.net', 'wa:5511@s.whatsapp.net', 'wa:88@lid']);
    });

    it('should keep receipts, deletions and failures, and drop the rest of messages_update', () => {
      const update = (id: string, type: string, state: string) =>
        event(id, 'messages_update', { type, state, event: { MessageIDs: ['X'], Chat: '5511@s.whatsapp.net', IsFromMe: 'True' } });
      const jobs = jobsOfEvents([
        update('1', 'ReadReceipt', 'Read'),
        update('2', 'Deleted', 'Deleted'),
        update('3', 'Pinned', 'Pinned'),
        update('4', 'ReadReceipt', 'Sent'),
      ]);
      expect(jobs.map((job) => [job.dedupeKey, job.payload.type, job.lane])).toEqual([
        ['event:1', 'ReadReceipt', 'wa:5511@s.whatsapp.net'],
        ['event:2', 'Deleted', 'wa:5511@s.whatsapp.net'],
      ]);
      expect(jobs[0].payload).toMatchObject({ ids: ['X'], fromMe: true, state: 'Read' });
    });
  });

  describe(intakeOfWebhook.name, () => {
    it("should turn an agent's public reply into one send per attachment, linked to fixed WhatsApp ids before any send", () => {
      const intake = intakeOf(
        agentReply({
          content_attributes: { in_reply_to: 40 },
          attachments: [
            { id: 1, file_type: 'image', data_url: 'https://cw.example/rails/active_storage/blobs/1/foto.png' },
            { id: 2, file_type: 'file', data_url: 'https://cw.example/rails/active_storage/blobs/2/nota%20fiscal.pdf' },
          ],
        }),
      );
      expect(intake.jobs).toEqual([
        {
          lane: 'cw:12',
          kind: JobKind.CwSend,
          dedupeKey: 'cw:41:send',
          payload: expect.objectContaining({
            conversationId: 12,
            cwMessageId: 41,
            content: 'Olá!',
            senderName: 'Ana Souza',
            inReplyTo: 40,
            attachments: [
              { url: 'https://cw.example/rails/active_storage/blobs/1/foto.png', fileType: 'image', fileName: 'foto.png' },
              { url: 'https://cw.example/rails/active_storage/blobs/2/nota%20fiscal.pdf', fileType: 'file', fileName: 'nota fiscal.pdf' },
            ],
          }),
        },
      ]);
      expect(intake.links.map((link) => link.waMessageId)).toEqual([whatsappIdsOf('rinst', 41, 0).messageId, whatsappIdsOf('rinst', 41, 1).messageId]);
      expect(intake.agentActive).toEqual({ conversationId: 12 });
    });

    it("should link one more part for an audio-only reply's text, which goes first on its own (audio takes no caption)", () => {
      const intake = intakeOf(agentReply({ attachments: [{ id: 3, file_type: 'audio', data_url: 'https://cw.example/rails/active_storage/blobs/3/a.ogg' }] }));
      expect(intake.links.map((link) => link.waMessageId)).toEqual([whatsappIdsOf('rinst', 41, 0).messageId, whatsappIdsOf('rinst', 41, 1).messageId]);
      const audio = { url: 'u', fileName: 'a.ogg', fileType: 'audio' };
      const video = { url: 'u', fileName: 'v.mp4', fileType: 'video' };
      expect(replyLayout('oi', [audio])).toEqual({ count: 2, textFirst: true, captioned: -1 });
      expect(replyLayout('', [audio])).toEqual({ count: 1, textFirst: false, captioned: -1 });
      expect(replyLayout('oi', [audio, video])).toEqual({ count: 2, textFirst: false, captioned: 1 });
      expect(replyLayout('oi', [])).toEqual({ count: 1, textFirst: false, captioned: -1 });
    });

    it('should give every message and part fixed ids of the WhatsApp shape', () => {
      const ids = whatsappIdsOf('rinst', 41, 0);
      expect(ids).toEqual(whatsappIdsOf('rinst', 41, 0));
      expect(ids.messageId).toMatch(/^3EB0[0-9A-F]{18}$/);
      expect(ids.recordId).toMatch(/^r[0-9a-f]{7}$/);
      expect(whatsappIdsOf('rinst', 41, 1).messageId).not.toBe(ids.messageId);
      expect(whatsappIdsOf('rother', 41, 0).messageId).not.toBe(ids.messageId);
    });

    it.each([
      ['a private note', agentReply({ private: true })],
      ["the contact's own message", agentReply({ message_type: 'incoming' })],
      ['an activity', agentReply({ message_type: 'activity' })],
      ["the bridge's own copy", agentReply({ source_id: 'WAID:3EB0AAAA' })],
      ['an empty reply', agentReply({ content: '  ' })],
      ['a reply without ids', agentReply({ id: 'x' })],
      ['another event', { event: 'contact_updated', id: 3 }],
      ['a reply in another inbox (an account-wide webhook)', agentReply({ inbox: { id: INBOX + 1 }, conversation: { id: 12, inbox_id: INBOX + 1 } })],
    ])('should ask nothing for %s', (_what, body) => {
      expect(intakeOf(body as Record<string, unknown>).jobs).toEqual([]);
    });

    it('should turn a deletion into a revoke and a status change into the conversation status', () => {
      expect(intakeOf(agentReply({ event: 'message_updated', content_attributes: { deleted: true } })).jobs).toEqual([
        { lane: 'cw:12', kind: JobKind.CwDelete, dedupeKey: 'cw:41:delete', payload: { conversationId: 12, cwMessageId: 41 } },
      ]);
      expect(intakeOf(agentReply({ event: 'message_updated' })).jobs).toEqual([]);
      const resolved = intakeOf({ event: 'conversation_status_changed', id: 12, status: 'resolved' });
      expect(resolved).toMatchObject({ conversationStatus: { conversationId: 12, status: 'resolved' }, resolved: { conversationId: 12 } });
      expect(intakeOf({ event: 'conversation_status_changed', id: 12, status: 'open', meta: { assignee: { id: 7 } } }).agentActive).toEqual({
        conversationId: 12,
      });
    });
  });
});
