import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { nextPhone, sleep, Stack, waitFor } from './support/stack';

type Announced = { messageType: string; text: string; content: Record<string, unknown> };

/**
 * Issue 34, mode 2: a message the instance cannot decrypt (Bad MAC, no session for a LID sender, no
 * `<enc>` at all) is stored and announced as a placeholder with a clear marker, Baileys asks for a
 * retry, and the placeholder is completed when the content comes; one that never becomes decryptable
 * stays a placeholder. A flood of them keeps the worker's heap bounded.
 */
describe('undecryptable inbound messages (issue 34)', () => {
  const stack = new Stack();
  let instance: { id: string; token: string; phone: string };
  let companion: string;

  const newContact = async (name: string): Promise<string> => {
    const phone = nextPhone('5551');
    await stack.control('POST', '/sim/accounts', { phone, name });
    return phone;
  };
  const send = async (from: string, text: string): Promise<string> =>
    (await stack.control<{ id: string }>('POST', `/sim/accounts/${from}/send`, { to: instance.phone, text })).id;
  const announced = (messageId: string) =>
    stack.db.dataSource.query(
      `SELECT payload->'message' AS message FROM outbox_events WHERE instance_id = $1 AND event_type = 'messages'
         AND payload->'message'->>'messageid' = $2 ORDER BY id`,
      [instance.id, messageId],
    ) as Promise<Array<{ message: Announced }>>;
  const found = async (messageId: string): Promise<Record<string, any>> => {
    const { status, body } = await stack.gw.call('POST', '/message/find', { token: instance.token, body: { id: messageId } });
    expect(status).toBe(200);
    return body.messages.find((message: { messageid: string }) => message.messageid === messageId);
  };
  const isPlaceholder = (message: Announced) => message.messageType === 'placeholder' && message.content?.placeholder === 'undecryptable';

  // The socket's inbound queue bound (INBOUND_QUEUE_MAX, 1,000 by default) is small here, so the flood
  // below runs many times over it and the heap check sees the worker paused and resumed reading.
  const socketQueueMax = 50;

  beforeAll(async () => {
    await stack.start({}, undefined, { inboundQueueMax: socketQueueMax });
    instance = await stack.connectedInstance('undecryptable');
    companion = (await stack.control<Array<{ jid: string }>>('GET', `/sim/devices?phone=${instance.phone}`))[0].jid;
  }, 60_000);

  afterAll(() => stack.stop());

  afterEach(async () => {
    await stack.control('POST', '/sim/faults', { kind: 'clear' });
  });

  /** A placeholder first (stored, announced with the marker), then the content under the same id. */
  const expectHealed = async (messageId: string, text: string) => {
    const events = await waitFor(
      () => announced(messageId),
      (list) => list.some((event) => event.message.text === text),
      30_000,
      `${messageId} completed`,
    );
    expect(isPlaceholder(events[0].message)).toBe(true);
    expect(events[0].message.content.reason).toEqual(expect.any(String));
    expect(events.at(-1)!.message).toMatchObject({ text, messageType: expect.not.stringMatching(/^placeholder$/) });
    const record = await found(messageId);
    expect(record).toMatchObject({ text, fromMe: false });
    expect(record.messageType).not.toBe('placeholder');
    expect(record.content.placeholder).toBeUndefined();
  };

  it('should store a Bad MAC message as a placeholder, ask for a retry and complete it when the retry decrypts', async () => {
    const contact = await newContact('Bad Mac');
    await send(contact, 'primeira'); // a session exists: the next one's Bad MAC is a broken ratchet message
    await stack.control('POST', '/sim/faults', { kind: 'undecryptable', mode: 'bad-mac', device: companion, count: 1 });
    const id = await send(contact, 'chegou depois do retry');
    await expectHealed(id, 'chegou depois do retry');
    const outbox = await stack.control<Array<{ id: string; receipts: Array<{ type: string; from: string }> }>>('GET', `/sim/accounts/${contact}/outbox`);
    expect(outbox.find((entry) => entry.id === id)!.receipts.some((receipt) => receipt.type === 'retry')).toBe(true);
  }, 60_000);

  it('should store the first message of a LID sender we have no session with as a placeholder and complete it after the retry', async () => {
    const contact = await newContact('Sem Sessao');
    await stack.control('POST', '/sim/faults', { kind: 'undecryptable', mode: 'no-session', device: companion, count: 1 });
    const id = await send(contact, 'oi, sou novo');
    await expectHealed(id, 'oi, sou novo');
  }, 60_000);

  it('should complete a message that came without its encrypted content when the phone resends it', async () => {
    const contact = await newContact('Sem Enc');
    await stack.control('POST', '/sim/faults', { kind: 'undecryptable', mode: 'unavailable', device: companion, count: 1 });
    const id = await send(contact, 'reenviada pelo telefone');
    await expectHealed(id, 'reenviada pelo telefone');
    const requests = await stack.control<Array<{ type: string; answered: string[] }>>('GET', `/sim/accounts/${instance.phone}/peer-requests`);
    expect(requests.some((request) => request.type === 'PLACEHOLDER_MESSAGE_RESEND' && request.answered.includes(id))).toBe(true);
  }, 60_000);

  it('should keep a message that never becomes decryptable as a placeholder, in /message/find and its event', async () => {
    const contact = await newContact('Nunca');
    await send(contact, 'antes');
    // Every device of the instance's account, its phone too: no retry and no resend can help.
    await stack.control('POST', '/sim/faults', { kind: 'undecryptable', mode: 'never', device: instance.phone, count: 1 });
    const id = await send(contact, 'jamais lida');
    const [event] = await waitFor(
      () => announced(id),
      (list) => list.length > 0,
      20_000,
      'the placeholder announced',
    );
    expect(isPlaceholder(event.message)).toBe(true);
    // Retries asked for and answered (garbled again), the phone asked for a resend: all spent.
    type Outbox = Array<{ id: string; receipts: Array<{ type: string }> }>;
    await waitFor(
      async () => (await stack.control<Outbox>('GET', `/sim/accounts/${contact}/outbox`)).find((entry) => entry.id === id)!,
      (entry) => entry.receipts.filter((receipt) => receipt.type === 'retry').length >= 2,
      20_000,
      'retries asked for',
    );
    await sleep(10_000); // Baileys gives the phone's resend 8 s
    expect((await announced(id)).map((e) => isPlaceholder(e.message))).toEqual([true]);
    const record = await found(id);
    expect(record).toMatchObject({ messageType: 'placeholder', text: '', fromMe: false, content: { placeholder: 'undecryptable' } });
    expect(record.content.reason).not.toBe('');
    expect(record.chatid).toBe(`${contact}@s.whatsapp.net`);
    expect(record.sender_pn).toBe(`${contact}@s.whatsapp.net`);
  }, 90_000);

  // The flood is 10,000 messages (measured 2026-12-02: all stored in 263 s, heap +17.4 MB):
  // `FLOOD_MESSAGES=10000 npm test -- apps/gateway/test/undecryptable-inbound.e2e.spec.ts`. npm test
  // floods 500, ten times this stack's socket queue bound (2,000 against the default bound took ~60 s
  // of the CI's budget; docs/bench/ci-time.md). The heap bound scales with the flood up to 256 MB:
  // 128 KB a message, what 256 MB allowed for 2,000 (64 MB for 500).
  const total = Number(process.env.FLOOD_MESSAGES ?? 500);
  const heapBound = Math.min(256, Math.max(total, 500) / 8) * 2 ** 20;

  it(`should store ${total} undecryptable messages as placeholders with the heap bounded`, async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const contact = await newContact('Enxurrada');
    await send(contact, 'antes');
    await waitFor(
      () => stack.db.dataSource.query(`SELECT 1 FROM messages WHERE instance_id = $1 AND sender_pn = $2`, [instance.id, `${contact}@s.whatsapp.net`]),
      (rows) => rows.length === 1,
      20_000,
      'the first message',
    );
    await stack.control('POST', '/sim/faults', { kind: 'undecryptable', mode: 'unavailable', device: instance.phone, count: total });
    const before = heap();
    const pausesBefore = stack.worker.inbound.backlog().pauses;
    const started = Date.now();
    for (let n = 0; n < total; n += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => stack.sim.sim.sendMessage(contact, instance.phone, { text: `flood ${n + i}` })));
    }
    const count = async () =>
      Number(
        (
          await stack.db.dataSource.query(`SELECT count(*) AS n FROM messages WHERE instance_id = $1 AND sender_pn = $2 AND message_type = 'placeholder'`, [
            instance.id,
            `${contact}@s.whatsapp.net`,
          ])
        )[0].n,
      );
    await waitFor(count, (n) => n === total, 600_000, 'every placeholder stored');
    const stored = Date.now() - started;
    await sleep(12_000); // Baileys' placeholder-resend timers (2 s + 8 s) run out
    const growth = heap() - before;
    const pauses = stack.worker.inbound.backlog().pauses - pausesBefore;
    console.log(
      JSON.stringify({ flood: total, storedMs: stored, pauses, heapBeforeMB: +(before / 2 ** 20).toFixed(1), heapGrowthMB: +(growth / 2 ** 20).toFixed(1) }),
    );
    // The flood outran the worker: the socket was paused at its bound (and read again, or not all would be stored).
    expect(pauses).toBeGreaterThan(0);
    // Measured 2026-12: see the report; a generous bound (the simulator's own log and inbox are in this heap too).
    expect(growth).toBeLessThan(heapBound);
  }, 900_000);
});
