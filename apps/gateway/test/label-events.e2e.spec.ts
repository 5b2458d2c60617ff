import { nextPhone, Stack, waitFor } from './support/stack';

/** Labels made on the phone reach the instance through app state: `labels` and `chat_labels` events. */
describe('labels and chat_labels events (phone app state → Baileys → outbox)', () => {
  const stack = new Stack();
  afterAll(() => stack.stop());

  it('should announce a new label and its use on a chat, and keep the chat’s wa_label', async () => {
    await stack.start();
    const { token, phone } = await stack.connectedInstance('labels');
    const contact = nextPhone('5591');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
    // A chat the store knows: the contact writes first.
    await stack.control('POST', `/sim/accounts/${contact}/send`, { to: phone, text: 'oi' });
    await waitFor(
      () => stack.gw.call('POST', '/message/find', { token, body: { fromMe: false } }),
      (r) => r.body.returnedMessages > 0,
      15_000,
      'first message',
    );

    const events = (type: string) =>
      stack.db.dataSource
        .query(`SELECT payload FROM outbox_events WHERE event_type = $1 ORDER BY id`, [type])
        .then((rows: Array<{ payload: Record<string, any> }>) => rows.map((row) => row.payload));

    await stack.control('POST', `/sim/accounts/${phone}/app-state`, { mod: { addLabel: { id: '8', name: 'Follow up', color: 1 } } });
    const labels = await waitFor(
      () => events('labels'),
      (list) => list.some((event) => event.label.id === '8'),
      20_000,
      'labels event',
    );
    expect(labels.find((event) => event.label.id === '8')).toMatchObject({ EventType: 'labels', label: { name: 'Follow up', color: 1, deleted: false } });

    await stack.control('POST', `/sim/accounts/${phone}/app-state`, { jid: `${contact}@s.whatsapp.net`, mod: { addChatLabel: { labelId: '8' } } });
    const chatLabels = await waitFor(
      () => events('chat_labels'),
      (list) => list.length > 0,
      20_000,
      'chat_labels event',
    );
    expect(chatLabels[0]).toMatchObject({ EventType: 'chat_labels', event: { labelid: '8', action: 'add', labels: ['8'] } });
  }, 90_000);
});
