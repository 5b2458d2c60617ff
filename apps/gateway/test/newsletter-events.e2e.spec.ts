import { nextPhone, Stack, waitFor } from './support/stack';

/** Posts of a channel the instance follows: stored, and announced as `newsletter_messages`. */
describe('newsletter_messages events (channel post → Baileys → outbox)', () => {
  const stack = new Stack();
  afterAll(() => stack.stop());

  it('should announce a post of a followed channel with its server id', async () => {
    await stack.start();
    const { token, phone } = await stack.connectedInstance('follower');
    const publisher = nextPhone('5599');
    await stack.control('POST', '/sim/accounts', { phone: publisher, name: 'Channel owner' });
    const channel = await stack.control<{ jid: string }>('POST', '/sim/newsletters', { owner: publisher, name: 'Ofertas', followers: [phone] });
    const post = await stack.control<{ id: string; serverId: number }>('POST', `/sim/newsletters/${encodeURIComponent(channel.jid)}/posts`, {
      text: 'Promoção de hoje',
    });

    const events = await waitFor(
      () =>
        stack.db.dataSource
          .query(`SELECT payload FROM outbox_events WHERE event_type = 'newsletter_messages'`)
          .then((rows: Array<{ payload: Record<string, any> }>) => rows.map((row) => row.payload)),
      (list) => list.length > 0,
      15_000,
      'newsletter_messages event',
    );
    expect(events[0]).toMatchObject({
      EventType: 'newsletter_messages',
      newsletter: channel.jid,
      server_id: String(post.serverId),
      message: { chatid: channel.jid, text: 'Promoção de hoje' },
    });
    const found = await stack.gw.call('POST', '/message/find', { token, body: { chatid: channel.jid } });
    expect(found.body.returnedMessages).toBe(1);
  }, 60_000);
});
