import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { CHAT_FIELDS, ChatRepository, InstanceRepository, type ChatField, type ChatFilter, type ChatSearch } from '@gw/persistence';

/**
 * `/chat/find`'s SQL: every filter a client can build runs (each field with each comparison its kind
 * takes), values are bound and never read as SQL or as LIKE wildcards, and the counts see every chat.
 */
describe('ChatRepository.search binds every value', () => {
  let db: TestDatabase;
  let sut: ChatRepository;
  let counter = 0;
  const instanceId = 'rchatsearch';
  const observe = (observation: Parameters<ChatRepository['observe']>[1]) =>
    db.dataSource.transaction((manager) => new ChatRepository(db.dataSource).within(manager).observe(instanceId, observation, () => `rsearch${counter++}`));
  const search = (filters: ChatFilter[], extra: Partial<ChatSearch> = {}) =>
    sut.search(instanceId, '5511900000000', {
      filters,
      operator: 'AND',
      sort: { field: 'wa_lastMsgTimestamp', descending: true },
      limit: 50,
      offset: 0,
      ...extra,
    });

  beforeAll(async () => {
    db = await openTestDatabase();
    sut = new ChatRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-chat-search', name: 's' });
    const pn = await observe({ waChatId: '5511900000101@s.whatsapp.net', waName: "O'Brien_%" });
    await sut.writeLead(
      instanceId,
      { pn: pn.chat.waChatId, lid: '', isGroup: false },
      { lead_tags: ['a_b'], lead_kanbanOrder: 5, lead_status: 'x' },
      () => 'unused',
    );
    await observe({ waChatLid: '99990000000101@lid', waName: 'lid only' });
    await observe({ waChatId: '120363000000000101@g.us', isGroup: true, waName: 'group' });
  });
  afterAll(() => db.close());

  it('should run every field with every comparison its kind takes', async () => {
    const comparisons = {
      text: ['contains', 'not_contains', 'equals', 'not_equals', 'gt', 'gte', 'lt', 'lte'],
      number: ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte'],
      boolean: ['equals', 'not_equals'],
      list: ['equals', 'not_equals', 'contains', 'not_contains'],
    } as const;
    const values = { text: "'; DROP TABLE chats; --", number: 3, boolean: true, list: '%' };
    for (const field of Object.keys(CHAT_FIELDS) as ChatField[]) {
      const { kind } = CHAT_FIELDS[field];
      for (const comparison of comparisons[kind]) {
        for (const operator of ['AND', 'OR'] as const) {
          const found = await search(
            [
              { field, comparison, value: values[kind] },
              { field: 'wa_isGroup', comparison: 'equals', value: false },
            ],
            { operator },
          );
          expect(found.totals.total_chats).toBe(3);
        }
      }
      if (kind !== 'list') await search([], { sort: { field, descending: false } });
    }
    const tables: Array<{ n: number }> = await db.dataSource.query(`SELECT count(*)::int AS n FROM chats WHERE instance_id = $1`, [instanceId]);
    expect(tables[0].n).toBe(3);
  });

  it('should match quotes, % and _ as written', async () => {
    expect((await search([{ field: 'wa_name', comparison: 'contains', value: "o'brien" }])).rows.map((row) => row.waName)).toEqual(["O'Brien_%"]);
    expect((await search([{ field: 'wa_name', comparison: 'contains', value: '_%' }])).totalRecords).toBe(1);
    expect((await search([{ field: 'wa_name', comparison: 'contains', value: 'n_' }])).totalRecords).toBe(1);
    expect((await search([{ field: 'wa_name', comparison: 'contains', value: 'l_d' }])).totalRecords).toBe(0);
    expect((await search([{ field: 'lead_tags', comparison: 'contains', value: '_' }])).totalRecords).toBe(1);
    expect((await search([{ field: 'lead_tags', comparison: 'equals', value: 'A_B' }])).totalRecords).toBe(1);
  });

  it('should read wa_fastid as owner:number, by LID when the chat has no number', async () => {
    const byLid = await search([{ field: 'wa_fastid', comparison: 'equals', value: '5511900000000:99990000000101' }]);
    expect(byLid.rows.map((row) => row.waChatLid)).toEqual(['99990000000101@lid']);
    const group = await search([{ field: 'wa_fastid', comparison: 'equals', value: '5511900000000:120363000000000101' }]);
    expect(group.rows.map((row) => row.waChatId)).toEqual(['120363000000000101@g.us']);
  });

  it('should compare lead numbers as numbers, absent ones as 0', async () => {
    expect((await search([{ field: 'lead_kanbanOrder', comparison: 'gt', value: 4 }])).totalRecords).toBe(1);
    expect((await search([{ field: 'lead_kanbanOrder', comparison: 'equals', value: 0 }])).totalRecords).toBe(2);
    const sorted = await search([], { sort: { field: 'lead_kanbanOrder', descending: true } });
    expect(sorted.rows[0].waChatId).toBe('5511900000101@s.whatsapp.net');
  });
});
