import { ChatRepository, LidMappingRepository } from '@gw/persistence';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

const customFields = (make: (n: number) => string) =>
  Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`lead_field${String(index + 1).padStart(2, '0')}`, make(index + 1)]));

describe('POST /chat/editLead and /chat/find (HTTP)', () => {
  let gw: GatewayHarness;
  let token: string;
  let instanceId: string;

  const editLead = (body: unknown) => gw.call('POST', '/chat/editLead', { token, body });
  const find = (body: unknown) => gw.call('POST', '/chat/find', { token, body });
  const observe = (observation: Parameters<ChatRepository['observe']>[1]) =>
    gw.db.dataSource.transaction((manager) =>
      new ChatRepository(gw.db.dataSource).within(manager).observe(instanceId, observation, () => `rchat${Math.random().toString(16).slice(2, 12)}`),
    );

  beforeAll(async () => {
    gw = await startGateway();
    ({ token, id: instanceId } = await gw.createInstance('leads'));
  });
  afterAll(() => gw.close());

  describe('POST /chat/editLead', () => {
    it('should write every lead field of a chat that has no row yet and answer the Chat record', async () => {
      const { status, body } = await editLead({
        id: '5511970000001@s.whatsapp.net',
        lead_name: 'João Silva',
        lead_fullName: 'João Silva Pereira',
        lead_email: 'joao@exemplo.com',
        lead_personalid: '123.456.789-00',
        lead_status: 'qualificado',
        lead_tags: ['vip', 'suporte'],
        lead_notes: 'Plano premium',
        lead_isTicketOpen: true,
        lead_assignedAttendant_id: 'att_123456',
        lead_kanbanOrder: 1000,
        chatbot_disableUntil: 1735686000,
        ...customFields((n) => `value ${n}`),
      });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        wa_chatid: '5511970000001@s.whatsapp.net',
        wa_fastid: ':5511970000001',
        wa_isGroup: false,
        phone: '+55 11 97000-0001',
        lead_name: 'João Silva',
        lead_fullName: 'João Silva Pereira',
        lead_email: 'joao@exemplo.com',
        lead_personalid: '123.456.789-00',
        lead_status: 'qualificado',
        lead_tags: ['vip', 'suporte'],
        lead_notes: 'Plano premium',
        lead_isTicketOpen: true,
        lead_assignedAttendant_id: 'att_123456',
        lead_kanbanOrder: 1000,
        chatbot_disableUntil: 1735686000,
        chatbot_agentResetMemoryAt: 0,
        chatbot_lastTrigger_id: '',
        chatbot_lastTriggerAt: 0,
        ...customFields((n) => `value ${n}`),
      });
      expect(body.id).toMatch(/^r[0-9a-f]{14}$/);
    });

    it('should keep fields not sent, clear with "" or null, and find the chat by wa_fastid, number, phone and record id', async () => {
      const first = await editLead({ number: '+55 (11) 97000-0002', lead_name: 'Ana', lead_status: 'novo', lead_tags: ['a'] });
      expect(first.status).toBe(200);
      const byFastId = await editLead({ id: first.body.wa_fastid, lead_status: 'cliente' });
      expect(byFastId.body).toMatchObject({ id: first.body.id, lead_name: 'Ana', lead_status: 'cliente', lead_tags: ['a'] });
      const byPhone = await editLead({ phone: '5511970000002', lead_name: null, lead_tags: [], lead_personalId: '999' });
      expect(byPhone.body).toMatchObject({ id: first.body.id, lead_name: '', lead_tags: [], lead_personalid: '999', lead_status: 'cliente' });
      const byRecordId = await editLead({ id: first.body.id, lead_notes: 'by id', lead_isTicketOpen: false, chatbot_disableUntil: '0' });
      expect(byRecordId.body).toMatchObject({ id: first.body.id, lead_notes: 'by id', lead_isTicketOpen: false, chatbot_disableUntil: 0 });
    });

    it('should write the lead of a phone number and its LID to one chat', async () => {
      const lidOnly = await observe({ waChatLid: '88880000000001@lid', waName: 'Bia' });
      await gw.db.dataSource.transaction((manager) =>
        new LidMappingRepository(gw.db.dataSource).within(manager).store(instanceId, [{ lid: '88880000000001@lid', pn: '5511970000003@s.whatsapp.net' }]),
      );
      const byPhone = await editLead({ id: '5511970000003', lead_name: 'Beatriz' });
      expect(byPhone.body).toMatchObject({
        id: lidOnly.chat.id,
        wa_chatid: '5511970000003@s.whatsapp.net',
        wa_chatlid: '88880000000001@lid',
        wa_name: 'Bia',
        lead_name: 'Beatriz',
      });
      const byLid = await editLead({ id: '88880000000001@lid', lead_status: 'lid' });
      expect(byLid.body).toMatchObject({ id: lidOnly.chat.id, lead_name: 'Beatriz', lead_status: 'lid' });
      // A LID whose number is known finds the chat stored by number only, too.
      const byNumber = await editLead({ id: '5511970000004@s.whatsapp.net', lead_name: 'Caio' });
      await gw.db.dataSource.transaction((manager) =>
        new LidMappingRepository(gw.db.dataSource).within(manager).store(instanceId, [{ lid: '88880000000002@lid', pn: '5511970000004@s.whatsapp.net' }]),
      );
      const sameByLid = await editLead({ id: '88880000000002@lid', lead_status: 'x' });
      expect(sameByLid.body).toMatchObject({ id: byNumber.body.id, wa_chatlid: '88880000000002@lid', lead_name: 'Caio', lead_status: 'x' });
    });

    it('should write a group’s lead', async () => {
      const { status, body } = await editLead({ id: '120363000000000077@g.us', lead_status: 'grupo' });
      expect(status).toBe(200);
      expect(body).toMatchObject({ wa_chatid: '120363000000000077@g.us', wa_isGroup: true, lead_status: 'grupo', phone: '' });
    });

    it('should refuse bad input with a 400 naming the field', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{}, /^id is required/],
        [{ id: '   ' }, /^id is required/],
        [{ id: 42 }, /^id must be a string/],
        [{ id: 'not a chat' }, /^Invalid id/],
        [{ id: '120363000000000001@newsletter' }, /^Invalid id/],
        [{ id: 'x'.repeat(201) }, /^id must be at most 200 characters/],
        [{ id: '5511970000009', lead_name: 'x'.repeat(256) }, /^lead_name must be at most 255 characters/],
        [{ id: '5511970000009', lead_notes: 'x'.repeat(10_001) }, /^lead_notes must be at most 10000 characters/],
        [{ id: '5511970000009', lead_field07: 'x'.repeat(2_001) }, /^lead_field07 must be at most 2000 characters/],
        [{ id: '5511970000009', lead_name: 5 }, /^lead_name must be a string/],
        [{ id: '5511970000009', lead_tags: 'vip' }, /^lead_tags must be an array of strings/],
        [{ id: '5511970000009', lead_tags: [1] }, /^lead_tags must be an array of strings/],
        [{ id: '5511970000009', lead_tags: Array.from({ length: 101 }, (_, n) => `t${n}`) }, /^lead_tags must have at most 100 tags/],
        [{ id: '5511970000009', lead_isTicketOpen: 'yes' }, /^lead_isTicketOpen must be a boolean/],
        [{ id: '5511970000009', lead_isTicketOpen: null }, /^lead_isTicketOpen must be a boolean/],
        [{ id: '5511970000009', lead_kanbanOrder: 1.5 }, /^lead_kanbanOrder must be an integer/],
        [{ id: '5511970000009', lead_kanbanOrder: 2 ** 60 }, /^lead_kanbanOrder must be an integer/],
        [{ id: '5511970000009', chatbot_disableUntil: -1 }, /^chatbot_disableUntil must be an integer between 0/],
        [{ id: '5511970000009', chatbot_disableUntil: null }, /^chatbot_disableUntil must be an integer/],
      ];
      for (const [body, error] of cases) {
        const answer = await editLead(body);
        expect({ body, status: answer.status, error: answer.body.error }).toEqual({ body, status: 400, error: expect.stringMatching(error) });
      }
      const chats: Array<{ n: number }> = await gw.db.dataSource.query(`SELECT count(*)::int AS n FROM chats WHERE instance_id = $1 AND wa_chatid = $2`, [
        instanceId,
        '5511970000009@s.whatsapp.net',
      ]);
      expect(chats[0].n).toBe(0);
    });
  });

  describe('POST /chat/find', () => {
    let other: { id: string; token: string };
    const ids = (body: { chats: Array<{ wa_chatid: string }> }) => body.chats.map((chat) => chat.wa_chatid);

    beforeAll(async () => {
      other = await gw.createInstance('find-leads');
      const on = (id: string, body: Record<string, unknown>) => gw.call('POST', '/chat/editLead', { token: other.token, body: { id, ...body } });
      const observeOther = (observation: Parameters<ChatRepository['observe']>[1]) =>
        gw.db.dataSource.transaction((manager) =>
          new ChatRepository(gw.db.dataSource).within(manager).observe(other.id, observation, () => `rfind${Math.random().toString(16).slice(2, 12)}`),
        );
      const last = (timestamp: number) => ({ timestamp, type: 'Conversation', textVote: 'oi', sender: 'x', incoming: true });
      await observeOther({ waChatId: '5511960000001@s.whatsapp.net', waName: 'Alice', lastMessage: last(1000) });
      await observeOther({ waChatId: '5511960000002@s.whatsapp.net', waName: 'Bob', lastMessage: last(3000) });
      await observeOther({ waChatId: '5511960000003@s.whatsapp.net', waName: 'Carol 100%', lastMessage: last(2000) });
      await observeOther({ waChatId: '120363000000000099@g.us', isGroup: true, waName: 'Grupo VIP', lastMessage: last(4000) });
      await on('5511960000001', { lead_status: 'novo lead', lead_tags: ['VIP', 'suporte'], lead_isTicketOpen: true, lead_kanbanOrder: 3, lead_field05: 'sp' });
      await on('5511960000002', { lead_status: 'cliente', lead_tags: ['suporte'], lead_assignedAttendant_id: 'att_1', lead_kanbanOrder: 1 });
      await on('5511960000003', { lead_status: 'Novo', lead_kanbanOrder: 2 });
      await gw.db.dataSource.query(`UPDATE chats SET labels = '{10,5}', notes = 'cliente vip' WHERE instance_id = $1 AND wa_chatid = $2`, [
        other.id,
        '5511960000002@s.whatsapp.net',
      ]);
    });

    it('should answer every chat, newest message first, with lead fields, the totals and the paging', async () => {
      const { status, body } = await gw.call('POST', '/chat/find', { token: other.token, body: {} });
      expect(status).toBe(200);
      expect(ids(body)).toEqual(['120363000000000099@g.us', '5511960000002@s.whatsapp.net', '5511960000003@s.whatsapp.net', '5511960000001@s.whatsapp.net']);
      expect(body.chats[3]).toMatchObject({
        wa_name: 'Alice',
        lead_status: 'novo lead',
        lead_tags: ['VIP', 'suporte'],
        lead_field05: 'sp',
        lead_isTicketOpen: true,
      });
      expect(body.pagination).toEqual({ totalRecords: 4, limit: 20, offset: 0 });
      expect(body.totalChatsStats).toMatchObject({ total_chats: 4, groups: 1, unread_chats: 4 });
      // Instances are apart.
      expect((await find({ wa_chatid: '5511960000001' })).body.pagination.totalRecords).toBe(0);
    });

    it('should filter with the value operators', async () => {
      const body = async (filters: Record<string, unknown>) => (await gw.call('POST', '/chat/find', { token: other.token, body: filters })).body;
      expect(ids(await body({ lead_status: '~novo', sort: 'wa_name' }))).toEqual(['5511960000001@s.whatsapp.net', '5511960000003@s.whatsapp.net']);
      expect(ids(await body({ lead_status: 'novo', sort: 'wa_name' }))).toHaveLength(2);
      expect(ids(await body({ lead_status: '!~novo', wa_isGroup: false }))).toEqual(['5511960000002@s.whatsapp.net']);
      expect(ids(await body({ lead_status: '!=cliente', wa_isGroup: false, sort: '+lead_kanbanOrder' }))).toEqual([
        '5511960000003@s.whatsapp.net',
        '5511960000001@s.whatsapp.net',
      ]);
      expect(ids(await body({ lead_kanbanOrder: '>=2', sort: '-lead_kanbanOrder' }))).toEqual(['5511960000001@s.whatsapp.net', '5511960000003@s.whatsapp.net']);
      expect(ids(await body({ lead_kanbanOrder: 1 }))).toEqual(['5511960000002@s.whatsapp.net']);
      expect(ids(await body({ wa_lastMsgTimestamp: '<2000' }))).toEqual(['5511960000001@s.whatsapp.net']);
      expect(ids(await body({ wa_isGroup: true }))).toEqual(['120363000000000099@g.us']);
      expect(ids(await body({ lead_isTicketOpen: true }))).toEqual(['5511960000001@s.whatsapp.net']);
      expect(ids(await body({ lead_assignedAttendant_id: 'att_1' }))).toEqual(['5511960000002@s.whatsapp.net']);
      expect(ids(await body({ wa_label: '10' }))).toEqual(['5511960000002@s.whatsapp.net']);
      expect(ids(await body({ wa_label: '1' }))).toEqual([]);
      expect(ids(await body({ wa_label: '~1' }))).toEqual(['5511960000002@s.whatsapp.net']);
      expect(ids(await body({ wa_notes: '~vip' }))).toEqual(['5511960000002@s.whatsapp.net']);
      expect(ids(await body({ lead_tags: 'vip' }))).toEqual(['5511960000001@s.whatsapp.net']);
      expect(ids(await body({ lead_tags: '!=vip', wa_isGroup: false, sort: 'wa_name' }))).toEqual([
        '5511960000002@s.whatsapp.net',
        '5511960000003@s.whatsapp.net',
      ]);
      expect(ids(await body({ lead_field05: 'sp' }))).toEqual(['5511960000001@s.whatsapp.net']);
      // % and _ are matched as written, not as wildcards.
      expect(ids(await body({ wa_name: '100%' }))).toEqual(['5511960000003@s.whatsapp.net']);
      expect(ids(await body({ wa_name: '%' }))).toEqual(['5511960000003@s.whatsapp.net']);
      expect(ids(await body({ name: '~grupo' }))).toEqual(['120363000000000099@g.us']);
      expect(ids(await body({ wa_fastid: ':5511960000002' }))).toEqual(['5511960000002@s.whatsapp.net']);
      // '' and null are no filter.
      expect((await body({ lead_status: '', wa_isGroup: null })).pagination.totalRecords).toBe(4);
    });

    it('should combine filters with AND (default) or OR', async () => {
      const body = async (filters: Record<string, unknown>) => (await gw.call('POST', '/chat/find', { token: other.token, body: filters })).body;
      expect(ids(await body({ lead_tags: 'suporte', lead_status: 'cliente' }))).toEqual(['5511960000002@s.whatsapp.net']);
      expect(ids(await body({ operator: 'AND', lead_tags: 'suporte', wa_isGroup: true }))).toEqual([]);
      expect(ids(await body({ operator: 'OR', lead_tags: 'vip', wa_isGroup: true }))).toEqual(['120363000000000099@g.us', '5511960000001@s.whatsapp.net']);
      expect(ids(await body({ operator: 'or', lead_status: '~cliente', lead_isTicketOpen: true, sort: '-wa_lastMsgTimestamp' }))).toEqual([
        '5511960000002@s.whatsapp.net',
        '5511960000001@s.whatsapp.net',
      ]);
    });

    it('should page by limit/offset and by the older page/pageSize', async () => {
      const body = async (filters: Record<string, unknown>) => (await gw.call('POST', '/chat/find', { token: other.token, body: filters })).body;
      const first = await body({ limit: 3, sort: 'wa_lastMsgTimestamp' });
      expect(ids(first)).toEqual(['5511960000001@s.whatsapp.net', '5511960000003@s.whatsapp.net', '5511960000002@s.whatsapp.net']);
      expect(first.pagination).toEqual({ totalRecords: 4, limit: 3, offset: 0 });
      const rest = await body({ limit: 3, offset: 3, sort: 'wa_lastMsgTimestamp' });
      expect(ids(rest)).toEqual(['120363000000000099@g.us']);
      const beyond = await body({ limit: 3, offset: 30 });
      expect(beyond).toMatchObject({ chats: [], pagination: { totalRecords: 4, limit: 3, offset: 30 } });
      const paged = await body({ page: 2, pageSize: 3, sort: 'wa_lastMsgTimestamp' });
      expect(ids(paged)).toEqual(['120363000000000099@g.us']);
      expect(paged.pagination).toEqual({ totalRecords: 4, limit: 3, offset: 3, page: 2, pageSize: 3, lastPage: 2 });
      expect((await body({ limit: '2' })).chats).toHaveLength(2);
    });

    it('should refuse bad input with a 400 naming the field', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ operator: 'XOR' }, /^operator must be AND or OR/],
        [{ sort: 'password' }, /^sort must be a Chat field/],
        [{ sort: '-lead_tags' }, /^sort must be a Chat field/],
        [{ sort: 'wa_name; DROP TABLE chats' }, /^sort must be a Chat field/],
        [{ limit: 0 }, /^limit must be an integer between 1 and 1000/],
        [{ limit: 1001 }, /^limit must be an integer between 1 and 1000/],
        [{ offset: -1 }, /^offset must be an integer between 0/],
        [{ offset: 2 ** 60 }, /^offset must be an integer between 0/],
        [{ page: 0 }, /^page must be an integer between 1/],
        [{ pageSize: 5000 }, /^pageSize must be an integer between 1 and 1000/],
        [{ wa_isGroup: 'maybe' }, /^wa_isGroup must be a boolean/],
        [{ lead_status: ['a'] }, /^lead_status must be a string/],
        [{ lead_status: 'x'.repeat(256) }, /^lead_status must be at most 255 characters/],
        [{ lead_kanbanOrder: '>=abc' }, /^lead_kanbanOrder must be a number/],
        [{ wa_lastMsgTimestamp: '1e400' }, /^wa_lastMsgTimestamp must be a number/],
        [{ lead_tags: '>=vip' }, /^lead_tags takes a value/],
      ];
      for (const [body, error] of cases) {
        const answer = await gw.call('POST', '/chat/find', { token: other.token, body });
        expect({ body, status: answer.status, error: answer.body.error }).toEqual({ body, status: 400, error: expect.stringMatching(error) });
      }
      expect((await gw.call('POST', '/chat/find', { token: 'nope', body: {} })).status).toBe(401);
    });
  });
});
