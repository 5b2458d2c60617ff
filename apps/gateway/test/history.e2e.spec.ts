import { nextPhone, Stack, waitFor } from './support/stack';

/** The initial history after a pairing: stored, and announced in one `history` event with the connect's request_id. */
describe('initial history (HTTP → worker → Baileys ← simulated phone)', () => {
  const stack = new Stack();
  afterAll(() => stack.stop());

  it('should store the history the phone sends and announce it with the pairing request_id', async () => {
    await stack.start();
    const phone = nextPhone('5571');
    const friend = nextPhone('5572');
    await stack.control('POST', '/sim/accounts', { phone, name: 'Loja' });
    const friendAccount = await stack.control<{ jid: string; lid: string }>('POST', '/sim/accounts', { phone: friend, name: 'Old friend' });
    const history = [
      {
        syncType: 0,
        progress: 100,
        conversations: [
          {
            id: friendAccount.lid,
            pnJid: friendAccount.jid,
            messages: [
              {
                message: {
                  key: { remoteJid: friendAccount.lid, fromMe: false, id: 'HIST0001' },
                  message: { conversation: 'from last week' },
                  messageTimestamp: Math.floor(Date.now() / 1000) - 86_400,
                },
              },
            ],
          },
        ],
      },
    ];
    await stack.control('POST', `/sim/accounts/${phone}/history`, { history });
    const { token } = await stack.gw.createInstance('history');
    const connect = await stack.gw.call('POST', '/instance/connect', { token, body: {}, headers: { 'x-request-id': 'pairing-42' } });
    expect(connect.body.request_id).toBe('pairing-42');
    await stack.control('POST', '/sim/scan', { phone, qr: connect.body.instance.qrcode });

    const rows: Array<{ payload: Record<string, any> }> = await waitFor(
      () => stack.db.dataSource.query(`SELECT payload FROM outbox_events WHERE event_type = 'history' ORDER BY id`),
      (r: Array<{ payload: Record<string, any> }>) => r.some((row) => row.payload.messages?.length > 0),
      30_000,
      'history event',
    );
    const event = rows.find((row) => row.payload.messages?.length > 0)!.payload;
    expect(event).toMatchObject({ EventType: 'history', request_id: 'pairing-42', instanceName: 'history', owner: phone });
    expect(event.messages[0]).toMatchObject({ messageid: 'HIST0001', text: 'from last week', fromMe: false });
    const found = await stack.gw.call('POST', '/message/find', { token, body: { id: 'HIST0001' } });
    expect(found.body.messages[0]).toMatchObject({ chatid: friendAccount.jid, text: 'from last week' });
  }, 90_000);
});
