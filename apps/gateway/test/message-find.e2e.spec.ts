import { MessageRepository, type NewMessage } from '@gw/persistence';
import { newMessageFixture } from '@gw/testing';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

describe('POST /message/find (HTTP)', () => {
  let gw: GatewayHarness;
  let token: string;
  let instanceId: string;

  const store = (overrides: Partial<NewMessage>) =>
    gw.db.dataSource.transaction((manager) =>
      new MessageRepository(gw.db.dataSource).within(manager).upsert(newMessageFixture(instanceId, { sendPayload: {}, ...overrides })),
    );

  beforeAll(async () => {
    gw = await startGateway();
    ({ token, id: instanceId } = await gw.createInstance('find'));
    const base = 1_770_000_000_000;
    for (let n = 0; n < 5; n++)
      await store({ messageId: `F${n}`, messageTimestamp: base + n, trackId: n < 3 ? 't-1' : 't-2', status: n === 4 ? 'Failed' : 'Sent' });
    await store({ messageId: 'OTHER', chatId: '120363000000000001@g.us', isGroup: true, fromMe: false, wasSentByApi: false, messageTimestamp: base + 10 });
  });
  afterAll(() => gw.close());

  it('should page newest first with the paging fields', async () => {
    const { status, body } = await gw.call('POST', '/message/find', { token, body: { chatid: '5511999990000@s.whatsapp.net', limit: 2 } });
    expect(status).toBe(200);
    expect(body).toMatchObject({ returnedMessages: 2, limit: 2, offset: 0, nextOffset: 2, hasMore: true });
    expect(body.messages.map((message: { messageid: string }) => message.messageid)).toEqual(['F4', 'F3']);
    const last = await gw.call('POST', '/message/find', { token, body: { chatid: '5511999990000@s.whatsapp.net', limit: 2, offset: 4 } });
    expect(last.body).toMatchObject({ returnedMessages: 1, hasMore: false });
  });

  it('should filter by track id, status, direction and sort ascending', async () => {
    expect((await gw.call('POST', '/message/find', { token, body: { track_id: 't-1' } })).body.returnedMessages).toBe(3);
    expect((await gw.call('POST', '/message/find', { token, body: { status: 'failed' } })).body.messages[0].messageid).toBe('F4');
    expect((await gw.call('POST', '/message/find', { token, body: { fromMe: false } })).body.messages[0].messageid).toBe('OTHER');
    const ascending = await gw.call('POST', '/message/find', { token, body: { track_id: 't-1', sort: 'messageTimestamp' } });
    expect(ascending.body.messages.map((message: { messageid: string }) => message.messageid)).toEqual(['F0', 'F1', 'F2']);
  });

  it('should find by id or messageid and show the record fields', async () => {
    const { body } = await gw.call('POST', '/message/find', { token, body: { id: 'F1' } });
    expect(body.messages[0]).toMatchObject({
      messageid: 'F1',
      chatid: '5511999990000@s.whatsapp.net',
      fromMe: true,
      wasSentByApi: true,
      sendFunction: 'SendTextMessage',
      track_id: 't-1',
    });
    expect(body.messages[0].id).toMatch(/^r[0-9a-f]{7}$/);
  });

  it('should refuse bad paging with 400', async () => {
    expect((await gw.call('POST', '/message/find', { token, body: { limit: 0 } })).status).toBe(400);
    expect((await gw.call('POST', '/message/find', { token, body: { limit: 'ten' } })).status).toBe(400);
    expect((await gw.call('POST', '/message/find', { token, body: { sort: 'sideways' } })).status).toBe(400);
  });

  it('should keep instances apart', async () => {
    const other = await gw.createInstance('other');
    expect((await gw.call('POST', '/message/find', { token: other.token, body: {} })).body.returnedMessages).toBe(0);
  });
});
