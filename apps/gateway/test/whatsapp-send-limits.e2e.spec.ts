import { CAMPAIGN_SCHEDULER_DEFAULTS, CampaignScheduler, type AsyncDispatcher } from '@gw/dispatch';
import { CampaignRepository } from '@gw/persistence';
import { BufferJSON } from '@whiskeysockets/baileys';
import { createLogger } from '@gw/platform';
import { nextPhone, Stack, waitFor, type InboxEntry } from './support/stack';

interface PrivacyTokenView {
  received: Array<{ from: string; t: number; token: string }>;
  carried: Array<{ id: string; to: string; tctoken: 'valid' | 'invalid' | 'none' }>;
}

const textOf = (entry: InboxEntry): string => entry.message?.extendedTextMessage?.text ?? entry.message?.conversation ?? '';

/**
 * Issue 34, mode 4: WhatsApp's limits on starting new chats, played by the simulator as the real server
 * does (libs/wa-sim/src/send-limits.ts): the reach-out timelock (error 463 and its mex notification)
 * and the new-chat cap (error 475 over the cycle's quota, capping notifications). A sync send that hits
 * one answers 429 naming the limit and its end; /instance/wa_messages_limits shows it; queued sends to
 * new chats wait for the end while sends to existing chats go on, then go by themselves: every accepted
 * id at its phone exactly once, a chat's sends in order.
 */
describe("WhatsApp's sending limits (issue 34, mode 4)", () => {
  const stack = new Stack();
  let dispatcher: AsyncDispatcher;
  let campaigns: CampaignScheduler;
  let token: string;
  let instanceId: string;
  let phone: string;
  let known: string;

  const contact = async () => {
    const number = nextPhone('5541');
    await stack.control('POST', '/sim/accounts', { phone: number, name: 'Cliente' });
    return number;
  };
  const sendAsync = async (number: string, text: string) => {
    const { status, body } = await stack.gw.call('POST', '/send/text', { token, body: { number, text, async: true } });
    expect(status).toBe(200);
    return body.messageid as string;
  };
  const texts = async (number: string, prefix: string) => (await stack.inbox(number, 0)).map(textOf).filter((text) => text.startsWith(prefix));
  const rows = async (ids: string[]) =>
    (await stack.db.dataSource.query(`SELECT message_id, status, error FROM messages WHERE instance_id = $1 AND message_id = ANY($2::text[])`, [
      instanceId,
      ids,
    ])) as Array<{ message_id: string; status: string; error: string }>;
  /** Every id at its phone exactly once (no other copy of its text), in the order each chat was given. */
  const deliveredOnce = async (prefix: string, sends: Array<{ number: string; text: string }>, timeoutMs: number) => {
    for (const number of new Set(sends.map((send) => send.number))) {
      const expected = sends.filter((send) => send.number === number).map((send) => send.text);
      await waitFor(
        () => texts(number, prefix),
        (got) => got.length >= expected.length,
        timeoutMs,
        `${expected.length} sends at ${number}`,
      );
      expect(await texts(number, prefix)).toEqual(expected);
    }
  };

  /** The async queue empty: the dispatcher removes a send once its ack is stored, a moment after the phone has it. */
  const queueEmpty = () =>
    waitFor(
      async () => (await stack.gw.call('GET', '/message/async', { token })).body.queue as { pending: number },
      (queue) => queue.pending === 0,
      10_000,
      'the async queue empty',
    );

  beforeAll(async () => {
    await stack.start({}, undefined, { sendAckTimeoutMs: 5_000 });
    ({ token, id: instanceId, phone } = await stack.connectedInstance('limited'));
    dispatcher = stack.asyncDispatcher();
    campaigns = new CampaignScheduler(
      new CampaignRepository(stack.db.dataSource),
      stack.bus,
      { ...CAMPAIGN_SCHEDULER_DEFAULTS, pollIntervalMs: 100 },
      createLogger('campaigns', 'silent'),
    );
    campaigns.start();
    // A chat the account already has: the contact wrote first.
    known = await contact();
    await stack.control('POST', `/sim/accounts/${known}/send`, { to: phone, text: 'oi, tudo bem?' });
    await waitFor(
      () =>
        stack.db.dataSource.query(`SELECT 1 FROM messages WHERE instance_id = $1 AND NOT from_me AND chat_id = $2`, [instanceId, `${known}@s.whatsapp.net`]),
      (found: unknown[]) => found.length > 0,
      20_000,
      'the contact message stored',
    );
  }, 90_000);

  afterAll(async () => {
    await campaigns?.stop();
    await dispatcher?.stop();
    await stack.stop();
  });

  afterEach(async () => {
    await stack.control('POST', '/sim/faults', { kind: 'clear' });
  });

  it('should answer 429 naming the reach-out timelock and its end, show it, and hold queued sends to new chats until it lifts while existing chats go on', async () => {
    const lockMs = 9_000;
    const locked = await stack.control<{ until: number }>('POST', '/sim/faults', { kind: 'reachout-timelock', device: phone, untilMs: lockMs });
    const end = new Date(Math.ceil(locked.until / 1000) * 1000).toISOString();

    const stranger = await contact();
    const refused = await stack.gw.call('POST', '/send/text', { token, body: { number: stranger, text: 'lock sync' } });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toContain('reach-out timelock');
    expect(refused.body.error).toContain(`until ${end}`);
    const limits = await stack.gw.call('GET', '/instance/wa_messages_limits', { token });
    expect(limits.body).toMatchObject({ can_send_new_messages: false, reachout_timelock: { active: true, until: end } });

    const [fresh, other] = [await contact(), await contact()];
    const sends = [
      { number: fresh, text: 'lock a1' },
      { number: known, text: 'lock k1' },
      { number: fresh, text: 'lock a2' },
      { number: other, text: 'lock b1' },
      { number: known, text: 'lock k2' },
    ];
    const ids: string[] = [];
    for (const send of sends) ids.push(await sendAsync(send.number, send.text));
    // A campaign to a new chat, then to the existing one: its first message waits for the lock's end.
    const campaignTo = await contact();
    const created = await stack.gw.call('POST', '/sender/simple', {
      token,
      body: { numbers: [campaignTo, known], type: 'text', text: 'camp oi', folder: `held-${Date.now()}`, delayMin: 0, delayMax: 0, scheduled_for: 0 },
    });
    expect(created.status).toBe(200);
    const folderId = created.body.folder_id as string;
    const folderOf = async () =>
      ((await stack.gw.call('GET', '/sender/listfolders', { token })).body as Array<Record<string, unknown>>).find((folder) => folder.id === folderId);
    // The existing chat is not held behind the new ones.
    await waitFor(
      () => texts(known, 'lock '),
      (got) => got.length === 2,
      6_000,
      'the existing chat served during the lock',
    );
    // It is established by the trusted-contact token the contact issued when it wrote first (a privacy_token
    // notification): the instance stored it under the contact's LID and attached it to its sends there.
    const tokens = await stack.control<PrivacyTokenView>('GET', `/sim/accounts/${phone}/privacy-tokens`);
    const given = tokens.received.find((entry) => entry.from === `${known}@s.whatsapp.net`);
    expect(given).toBeDefined();
    const { lid: knownLid } = await stack.control<{ lid: string }>('GET', `/sim/accounts/${known}`);
    const stored = (await stack.db.dataSource.query(`SELECT value FROM auth_keys WHERE instance_id = $1 AND type = 'tctoken' AND key_id = $2`, [
      instanceId,
      knownLid,
    ])) as Array<{ value: string }>;
    const entry = JSON.parse(stored[0]?.value ?? '{}', BufferJSON.reviver) as { token?: Buffer; timestamp?: string };
    expect(entry.token?.toString('base64')).toBe(given!.token);
    expect(Number(entry.timestamp)).toBe(given!.t);
    const toKnown = tokens.carried.filter((carried) => carried.to === `${known}@s.whatsapp.net`);
    expect(toKnown.length).toBeGreaterThanOrEqual(2);
    expect(toKnown.map((carried) => carried.tctoken)).toEqual(toKnown.map(() => 'valid'));
    // Messages to a new chat carry none (the sim refused them with 463 before routing, so they are not listed yet).
    expect(tokens.carried.filter((carried) => carried.to !== `${known}@s.whatsapp.net`).map((carried) => carried.tctoken)).not.toContain('valid');
    await waitFor(
      () => texts(known, 'camp '),
      (got) => got.length === 1,
      6_000,
      "the campaign's existing chat served during the lock",
    );
    // Nothing is left to release, but one message still waits for the lock: the campaign is not done.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await folderOf()).toMatchObject({ status: 'sending', log_total: 2, log_sucess: 1, log_failed: 0 });
    const waiting = await stack.gw.call('POST', '/sender/listmessages', { token, body: { folder_id: folderId, messageStatus: 'Scheduled' } });
    expect(waiting.body.messages.map((message: { chatid: string }) => message.chatid)).toEqual([`${campaignTo}@s.whatsapp.net`]);
    expect(Date.now()).toBeLessThan(locked.until);
    expect(await texts(fresh, 'lock ')).toEqual([]);
    expect(await texts(stranger, 'lock ')).toEqual([]);

    // WhatsApp's own limit queries fail: the answer is the limit stored from the refusal, its end, and the failure.
    const queryFault = await stack.control<{ id: number }>('POST', '/sim/faults', { kind: 'limits-query-error', device: phone, code: 500 });
    const known463 = await stack.gw.call('GET', '/instance/wa_messages_limits', { token });
    expect(known463.status).toBe(200);
    expect(known463.body).toMatchObject({
      reachable: false,
      can_send_new_messages: false,
      error_key: 'WHATSAPP_REACHOUT_TIMELOCK',
      reachout_timelock: { available: false, active: true, until: end, source: 'stored' },
      new_chat_message_capping: { available: false },
    });
    expect(known463.body.reachout_timelock.lookup_error).toMatch(/internal-server-error|500/);
    expect(known463.body.provider_message).toContain(`until ${end}`);
    expect(known463.body.new_chat_message_capping).not.toHaveProperty('source');
    await stack.control('DELETE', `/sim/faults/${queryFault.id}`);

    await deliveredOnce('lock ', sends, lockMs + 20_000);
    const final = await rows(ids);
    expect(final.filter((row) => row.status === 'Failed')).toEqual([]);
    await deliveredOnce('camp ', [{ number: campaignTo, text: 'camp oi' }], 10_000);
    await waitFor(folderOf, (folder) => folder?.status === 'done', 10_000, 'the campaign done once its held message went');
    expect(await folderOf()).toMatchObject({ status: 'done', log_total: 2, log_sucess: 2, log_failed: 0 });
    await queueEmpty();
  }, 90_000);

  it('should hold queued sends over the new-chat cap until the next cycle, send the rest, and lose or repeat none', async () => {
    const cycleMs = 6_000;
    // Texts of their own per attempt: a retried test finds the first attempt's texts in the phones' inboxes.
    const cap = `cap${Date.now().toString(36)}`;
    await stack.control('POST', '/sim/faults', { kind: 'new-chat-cap', device: phone, limit: 1, cycleMs });
    const [c1, c2, c3] = [await contact(), await contact(), await contact()];
    const sends = [
      { number: c1, text: `${cap} c1` },
      { number: c2, text: `${cap} c2` },
      { number: known, text: `${cap} k3` },
      { number: c3, text: `${cap} c3` },
      { number: known, text: `${cap} k4` },
    ];
    const started = Date.now();
    const ids: string[] = [];
    for (const send of sends) ids.push(await sendAsync(send.number, send.text));
    // One new chat per cycle: c1 at once, c2 after the first reset, c3 after the second; k3, k4 at once.
    await waitFor(
      () => texts(known, `${cap} k`),
      (got) => got.length === 2,
      5_000,
      'the existing chat served while capped',
    );
    expect(await texts(c1, `${cap} `)).toEqual([`${cap} c1`]);
    expect(await texts(c3, `${cap} `)).toEqual([]);
    const limits = await stack.gw.call('GET', '/instance/wa_messages_limits', { token });
    expect(limits.body).toMatchObject({ can_send_new_messages: false, new_chat_message_capping: { status: 'CAPPED', used_quota: 1, total_quota: 1 } });

    await deliveredOnce(`${cap} `, sends, 3 * cycleMs + 15_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(cycleMs);
    const final = await rows(ids);
    expect(final.filter((row) => row.status === 'Failed')).toEqual([]);
    await queueEmpty();
  }, 90_000);

  // bench/chaos `new-chat-cap`: a 475 from the cap that was just replaced by one with room ("0/1000 used")
  // held the send, and every send to a new chat, until the end of the NEW cycle (an hour).
  it('should send again at once a send refused by a new-chat cap that is over, and hold nothing for it', async () => {
    // The cap in force has room (1000 per hour); the next message is refused 475 as the old cap's last refusal.
    await stack.control('POST', '/sim/faults', { kind: 'new-chat-cap', device: phone, limit: 1_000, cycleMs: 3_600_000 });
    await stack.control('POST', '/sim/faults', { kind: 'ack', mode: 'error', error: '475', device: phone, count: 1 });
    const [c1, c2] = [await contact(), await contact()];
    const id1 = await sendAsync(c1, 'room c1');
    const id2 = await sendAsync(c2, 'room c2');
    await deliveredOnce(
      'room ',
      [
        { number: c1, text: 'room c1' },
        { number: c2, text: 'room c2' },
      ],
      20_000,
    );
    // The phones have them; each row's status follows once its ack is stored, a moment later.
    const final = await waitFor(
      () => rows([id1, id2]),
      (list) => list.length === 2 && list.every((row) => row.status !== 'Queued' && row.status !== 'Pending'),
      10_000,
      'both sends past Pending',
    );
    expect(final.filter((row) => row.status === 'Failed')).toEqual([]);
    const held = (await stack.db.dataSource.query(`SELECT kind, until FROM send_limits WHERE instance_id = $1 AND until > now()`, [instanceId])) as unknown[];
    expect(held).toEqual([]);

    // A sync send refused the same way answers 200, not 429 "until its cycle ends at <the new cycle's end>".
    await stack.control('POST', '/sim/faults', { kind: 'ack', mode: 'error', error: '475', device: phone, count: 1 });
    const c3 = await contact();
    const { status, body } = await stack.gw.call('POST', '/send/text', { token, body: { number: c3, text: 'room c3' } });
    expect({ status, error: body.error || '' }).toEqual({ status: 200, error: '' });
    await deliveredOnce('room ', [{ number: c3, text: 'room c3' }], 10_000);
  }, 60_000);
});
