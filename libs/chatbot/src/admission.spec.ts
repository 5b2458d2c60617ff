import { ChatbotAdmissionRepository } from '@gw/persistence';
import { admitEvents, matchesLead, matchesWords } from './admission';

/** Admission's repository bound to a test's stand-in for the follower's transaction. */
function admissionsOn(db: unknown): ChatbotAdmissionRepository {
  return new ChatbotAdmissionRepository({} as never).within(db as never);
}

describe('trigger matching', () => {
  it('matches start words as whole words, without case or accents', () => {
    expect(matchesWords('oi|olá|bom dia', 'Olá, tudo bem?')).toBe(true);
    expect(matchesWords('oi|olá|bom dia', 'BOM DIA!')).toBe(true);
    expect(matchesWords('oi', 'oitenta reais')).toBe(false);
    expect(matchesWords('preço', 'qual o preco?')).toBe(true);
    expect(matchesWords('', 'anything')).toBe(true);
    expect(matchesWords('a.b', 'axb')).toBe(false);
  });

  it.each([
    ['equals', 'novo', { lead_status: 'Novo' }, true],
    ['equals', 'novo', { lead_status: 'cliente' }, false],
    ['not_equals', 'cliente', { lead_status: 'novo' }, true],
    ['contains', 'vip', { lead_tags: ['loja', 'VIP'] }, true],
    ['not_contains', 'vip', { lead_tags: ['loja'] }, true],
    ['greater', '10', { lead_field01: '12' }, true],
    ['greater', '10', { lead_field01: 'abc' }, false],
    ['less', '10', { lead_field01: '9.5' }, true],
    ['empty', '', { lead_email: '' }, true],
    ['empty', '', { lead_tags: [] }, true],
    ['not_empty', '', { lead_email: 'a@b.c' }, true],
  ])('lead condition %s %s on %j is %s', (operator, value, chat, expected) => {
    const field = Object.keys(chat)[0];
    expect(matchesLead({ lead_field: field, lead_operator: operator as never, lead_value: value }, chat)).toBe(expected);
  });

  it('reads a lead field named without its lead_ prefix, and no condition matches everything', () => {
    expect(matchesLead({ lead_field: 'status', lead_operator: 'equals', lead_value: 'novo' }, { lead_status: 'novo' })).toBe(true);
    expect(matchesLead({ lead_field: '', lead_operator: '', lead_value: '' }, {})).toBe(true);
  });
});

describe('admission', () => {
  const event = (message: Record<string, unknown>) => ({
    id: '1',
    instanceId: 'i1',
    eventType: 'messages',
    chatId: '5511999990000@s.whatsapp.net',
    payload: { EventType: 'messages', chat: {}, message: { messageid: 'M1', chatid: '5511999990000@s.whatsapp.net', fromMe: false, text: 'oi', ...message } },
    createdAt: new Date(),
  });
  const settings = {
    instance_id: 'i1',
    id: 'i1',
    name: 'n',
    owner: '',
    chatbot_enabled: true,
    chatbot_ignore_groups: true,
    chatbot_stop_conversation: 'parar',
  };
  /** A manager that answers the batch's settings query (no triggers, no agents), the chat's pause query, and records every statement. */
  const manager = () => {
    const statements: string[] = [];
    return {
      statements,
      query: async (sql: string) => {
        statements.push(sql);
        if (sql.includes('FROM instances')) return [{ settings, records: null }];
        if (sql.includes('chatbot_disableUntil') && sql.startsWith('SELECT')) return [{ until: null }];
        return [];
      },
    };
  };

  it.each([
    [{ wasSentByApi: true, fromMe: true }, 'sent through the API'],
    [{ messageTimestamp: Date.now() - 20 * 60_000 }, 'too old to answer'],
    [{ messageType: 'ReactionMessage' }, 'not a new turn'],
    [{ isGroup: true }, 'groups are ignored'],
    [{ text: 'olá' }, 'no trigger matched'],
  ])('ignores %j (%s) without writing anything', async (message, reason) => {
    const db = manager();
    const [result] = await admitEvents(admissionsOn(db), 'i1', [event(message) as never], { defaultPauseMinutes: 60 });
    expect(result).toEqual({ action: 'ignored', reason });
    expect(db.statements.filter((sql) => /^\s*(INSERT|UPDATE|DELETE|WITH)/i.test(sql))).toEqual([]);
  });

  it("reads the pause of every chat of a batch with its settings, and a chat's own again after a pause", async () => {
    const [a, b] = ['5511999990001@s.whatsapp.net', '5511999990002@s.whatsapp.net'];
    const statements: string[] = [];
    const db = {
      query: async (sql: string, params: unknown[]) => {
        statements.push(sql);
        // Both chats paused far ahead when read with the batch; not paused when read alone.
        if (sql.includes('FROM instances'))
          return [{ settings, records: null, chats: (params[1] as string[]).map((chat) => ({ chat_id: chat, until: 4_000_000_000 })) }];
        if (sql.includes('chatbot_disableUntil') && sql.startsWith('SELECT')) return [{ until: null }];
        return [];
      },
    };
    const of = (chatId: string, messageid: string, text = 'oi') => ({ ...event({ messageid, chatid: chatId, text }), chatId });
    const batch = [of(a, 'M1'), of(b, 'M2'), of(a, 'M3')];
    const results = await admitEvents(admissionsOn(db), 'i1', batch as never, { defaultPauseMinutes: 60 });
    // One read for the batch: each chat's first event uses it; a chat's second event reads its own.
    expect(results.map((result) => (result.action === 'ignored' ? result.reason : result.action))).toEqual([
      'chatbot_disableUntil',
      'chatbot_disableUntil',
      'no trigger matched',
    ]);
    expect(statements.filter((sql) => sql.includes('FROM instances'))).toHaveLength(1);
    expect(statements.filter((sql) => !sql.includes('FROM instances'))).toHaveLength(1);

    // After a pause (the stop word in chat a), chat b's context is read anew, not taken from the batch.
    statements.length = 0;
    const paused = await admitEvents(admissionsOn(db), 'i1', [of(a, 'M4', 'parar'), of(b, 'M5')] as never, { defaultPauseMinutes: 60 });
    expect(paused.map((result) => (result.action === 'ignored' ? result.reason : result.action))).toEqual(['paused', 'no trigger matched']);
  });

  it('pauses the chat on the stop word, whatever its case and accents', async () => {
    const db = manager();
    const [result] = await admitEvents(admissionsOn(db), 'i1', [event({ text: ' PARAR ' }) as never], { defaultPauseMinutes: 60, now: () => 1_000_000 });
    expect(result).toEqual({ action: 'paused', reason: 'stop word', until: 1_000 + 3_600 });
    expect(db.statements.some((sql) => sql.includes('UPDATE chats SET lead'))).toBe(true);
  });
});
