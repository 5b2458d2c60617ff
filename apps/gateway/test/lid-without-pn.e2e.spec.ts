import { nextPhone, Stack, waitFor } from './support/stack';

type Announced = { messageid: string; sender_pn: string; sender_lid: string; sender_pn_unresolved?: boolean; chatid: string };

/**
 * Issue 34, mode 3: the server sends a LID-addressed contact's messages without `sender_pn` (Baileys PR
 * #2744, the simulator's `omit-pn` fault). A message whose sender's number nobody told us says so
 * (`sender_pn_unresolved: true`); once WhatsApp tells us the number (here: the usync of a send to the
 * contact), later messages carry it, the earlier record gets it, and the contact stays one chat.
 */
describe('LID senders without a phone number (issue 34)', () => {
  const stack = new Stack();
  let instance: { id: string; token: string; phone: string };

  beforeAll(async () => {
    await stack.start();
    instance = await stack.connectedInstance('lid-only');
  }, 60_000);

  afterAll(() => stack.stop());

  const announced = async (messageId: string) => {
    const [event] = await waitFor(
      () =>
        stack.db.dataSource.query(
          `SELECT payload->'message' AS message FROM outbox_events WHERE instance_id = $1 AND event_type = 'messages' AND payload->'message'->>'messageid' = $2`,
          [instance.id, messageId],
        ) as Promise<Array<{ message: Announced }>>,
      (rows) => rows.length > 0,
      20_000,
      `${messageId} announced`,
    );
    return event.message;
  };
  const record = async (messageId: string): Promise<Announced> => {
    const { body } = await stack.gw.call('POST', '/message/find', { token: instance.token, body: { id: messageId } });
    return body.messages.find((message: Announced) => message.messageid === messageId);
  };

  it('should mark a LID-only sender unresolved, then resolve it, fill in the earlier record and keep one chat', async () => {
    const phone = nextPhone('5561');
    await stack.control('POST', '/sim/accounts', { phone, name: 'So LID' });
    const { lid } = await stack.control<{ lid: string }>('GET', `/sim/accounts/${phone}`);
    const pn = `${phone}@s.whatsapp.net`;
    await stack.control('POST', '/sim/faults', { kind: 'omit-pn', device: phone });

    const first = (await stack.control<{ id: string }>('POST', `/sim/accounts/${phone}/send`, { to: instance.phone, text: 'sem número' })).id;
    expect(await announced(first)).toMatchObject({ sender_lid: lid, sender_pn: '', sender_pn_unresolved: true });
    expect(await record(first)).toMatchObject({ sender_lid: lid, sender_pn: '', sender_pn_unresolved: true });

    // The instance writes to the number: WhatsApp tells the LID of that number (usync).
    const sent = await stack.gw.call('POST', '/send/text', { token: instance.token, body: { number: phone, text: 'olá' } });
    expect(sent.status).toBe(200);

    const second = (await stack.control<{ id: string }>('POST', `/sim/accounts/${phone}/send`, { to: instance.phone, text: 'ainda sem sender_pn' })).id;
    const event = await announced(second);
    expect(event).toMatchObject({ sender_lid: lid, sender_pn: pn });
    expect(event.sender_pn_unresolved).toBeUndefined();

    const earlier = await waitFor(
      () => record(first),
      (message) => message.sender_pn === pn,
      10_000,
      'the first record resolved',
    );
    expect(earlier.sender_pn_unresolved).toBeUndefined();
    const chats: Array<{ wa_chatid: string; wa_chatlid: string }> = await stack.db.dataSource.query(
      `SELECT wa_chatid, wa_chatlid FROM chats WHERE instance_id = $1 AND (wa_chatid = $2 OR wa_chatlid = $3 OR wa_chatid = $3)`,
      [instance.id, pn, lid],
    );
    expect(chats).toEqual([{ wa_chatid: pn, wa_chatlid: lid }]);
  }, 60_000);
});
