import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * A chat's received messages are stored and announced in the order they were sent. Baileys rc14 could
 * swap a new contact's first messages (the first one stores the contact's LID mapping and migrates
 * its session before decrypting, and the next one overtook it): 6 of 20 new contacts in a reproduction.
 */
describe('messages of a chat arrive in order (e2e)', () => {
  const stack = new Stack();
  let instance: { id: string; token: string; phone: string };

  beforeAll(async () => {
    await stack.start();
    instance = await stack.connectedInstance('in-order');
  }, 60_000);

  afterAll(() => stack.stop());

  it("stores and announces a new contact's first messages in the order sent, for each of 12 contacts", async () => {
    const contacts = Array.from({ length: 12 }, () => nextPhone('5521'));
    for (const [n, phone] of contacts.entries()) await stack.control('POST', '/sim/accounts', { phone, name: `C${n}` });
    const sent = new Map<string, string[]>();
    // All contacts at once, each sending three messages back to back.
    await Promise.all(
      contacts.map(async (phone) => {
        const ids: string[] = [];
        for (const text of ['one', 'two', 'three'])
          ids.push((await stack.control<{ id: string }>('POST', `/sim/accounts/${phone}/send`, { to: instance.phone, text })).id);
        sent.set(phone, ids);
      }),
    );
    const all = [...sent.values()].flat();
    const events = await waitFor(
      () =>
        stack.db.dataSource.query(
          `SELECT payload->'message'->>'messageid' AS message_id FROM outbox_events
           WHERE instance_id = $1 AND event_type = 'messages' AND payload->'message'->>'messageid' = ANY($2) ORDER BY outbox_events.id`,
          [instance.id, all],
        ) as Promise<Array<{ message_id: string }>>,
      (rows) => rows.length === all.length,
      20_000,
      'every message announced',
    );
    const order = events.map((row) => row.message_id);
    for (const [phone, ids] of sent) expect({ phone, announced: order.filter((id) => ids.includes(id)) }).toEqual({ phone, announced: ids });
    // Each chat's last message is the last one sent (the three share a second: the later write wins).
    const chats: Array<{ last: string }> = await stack.db.dataSource.query(
      `SELECT last_message_text_vote AS last FROM chats WHERE instance_id = $1 AND wa_chatid = ANY($2)`,
      [instance.id, contacts.map((phone) => `${phone}@s.whatsapp.net`)],
    );
    expect(chats.map((chat) => chat.last)).toEqual(contacts.map(() => 'three'));
  }, 60_000);
});
