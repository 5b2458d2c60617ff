import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVENT_TYPES } from '@gw/contracts';
import { ASYNC_DISPATCHER_DEFAULTS, AsyncDispatcher, CAMPAIGN_SCHEDULER_DEFAULTS, CampaignScheduler } from '@gw/dispatch';
import { CampaignRepository, ChatRepository, DeliveryRepository, InstanceRepository, SendQueueRepository, WebhookRepository } from '@gw/persistence';
import { createLogger, SsrfGuard } from '@gw/platform';
import { WEBHOOK_RELAY_DEFAULTS, WebhookRelay } from '@gw/relay';
import { Webhook } from 'standardwebhooks';
import { capture, keysOf } from './support/captures';
import { nextPhone, Stack, waitFor } from './support/stack';

interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback receiver: 410 Gone under /gone, 200 elsewhere; keeps what it accepted. */
async function startReceiver() {
  const accepted: Delivery[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      const status = path.startsWith('/gone') ? 410 : 200;
      if (status === 200) accepted.push({ path, headers: request.headers, body });
      response.writeHead(status);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepted,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Every event kind, produced by real Baileys traffic with the simulated phones (and the real relay,
 * dispatcher and campaign scheduler), delivered to a loopback receiver: the global webhook gets every
 * instance's events, the instance webhook appends `/event/messageType` to its path before its query.
 * Each delivery is verified with `standardwebhooks` as a receiver would, and compared with the captures.
 */
describe('webhooks: every event kind from real traffic to a loopback receiver', () => {
  const stack = new Stack();
  const logger = createLogger('every-event', process.env.TEST_LOG_LEVEL ?? 'silent');
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let relay: WebhookRelay;
  let dispatcher: AsyncDispatcher;
  let campaigns: CampaignScheduler;
  let globalSecret: string;
  let instanceSecret: string;
  let token: string;
  let owner: string;
  const contact = nextPhone('5591');
  const member = nextPhone('5592');
  const instanceName = 'every-event';

  /** Accepted deliveries under a path prefix, verified and parsed. */
  const delivered = (prefix: string, secret: string) =>
    receiver.accepted
      .filter((entry) => entry.path.startsWith(prefix))
      .map((entry) => ({ ...entry, event: new Webhook(secret).verify(entry.body, entry.headers as Record<string, string>) as Record<string, any> }));
  const seenKinds = () => new Set(delivered('/global/', globalSecret).map((entry) => entry.event.EventType));

  beforeAll(async () => {
    await stack.start({ PUBLIC_BASE_URL: 'https://gw.example' });
    receiver = await startReceiver();
    relay = new WebhookRelay(
      new DeliveryRepository(stack.db.dataSource),
      new WebhookRepository(stack.db.dataSource),
      new InstanceRepository(stack.db.dataSource),
      stack.bus,
      {
        ...WEBHOOK_RELAY_DEFAULTS,
        publicBaseUrl: 'https://gw.example',
        includeToken: false,
        retryScheduleMs: [100, 100, 100],
        pollIntervalMs: 100,
        ssrf: SsrfGuard.fromList('127.0.0.0/8'),
      },
      logger,
    );
    relay.start();
    dispatcher = new AsyncDispatcher(
      new SendQueueRepository(stack.db.dataSource),
      new InstanceRepository(stack.db.dataSource),
      new ChatRepository(stack.db.dataSource),
      stack.bus,
      { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: 'e2e-every-event', pollIntervalMs: 100 },
      logger,
    );
    dispatcher.start();
    campaigns = new CampaignScheduler(new CampaignRepository(stack.db.dataSource), stack.bus, { ...CAMPAIGN_SCHEDULER_DEFAULTS, pollIntervalMs: 100 }, logger);
    campaigns.start();

    const global = await stack.gw.call('POST', '/globalwebhook', {
      admin: stack.gw.adminToken,
      body: { url: `${receiver.url}/global?src=gw`, events: [...EVENT_TYPES], addUrlEvents: true },
    });
    expect(global.status).toBe(200);
    globalSecret = global.body.secret;

    // The instance is paired with history on the phone, so the pairing brings a history event.
    owner = nextPhone('5590');
    await stack.control('POST', '/sim/accounts', { phone: owner, name: 'Loja' });
    const contactAccount = await stack.control<{ jid: string; lid: string }>('POST', '/sim/accounts', { phone: contact, name: 'Rita' });
    await stack.control('POST', '/sim/accounts', { phone: member, name: 'Bruno' });
    const history = [
      {
        syncType: 0,
        progress: 100,
        conversations: [
          {
            id: contactAccount.lid,
            pnJid: contactAccount.jid,
            messages: [
              {
                message: {
                  key: { remoteJid: contactAccount.lid, fromMe: false, id: 'HISTEVERY01' },
                  message: { conversation: 'old news' },
                  messageTimestamp: Math.floor(Date.now() / 1000) - 3_600,
                },
              },
            ],
          },
        ],
      },
    ];
    await stack.control('POST', `/sim/accounts/${owner}/history`, { history });
    ({ token } = await stack.gw.createInstance(instanceName));
    const hook = await stack.gw.call('POST', '/webhook', {
      token,
      body: { url: `${receiver.url}/inst?k=1`, events: [], addUrlEvents: true, addUrlTypesMessages: true },
    });
    expect(hook.status).toBe(200);
    instanceSecret = hook.body[0].secret;
    // A second webhook of the instance whose receiver answers 410 (from its first message on, so after
    // pairing, when the owner is known): the relay disables it, with a `webhook` event.
    expect((await stack.gw.call('POST', '/webhook', { token, body: { action: 'add', url: `${receiver.url}/gone`, events: ['messages'] } })).status).toBe(200);
    const connect = await stack.gw.call('POST', '/instance/connect', { token, body: {}, headers: { 'x-request-id': 'pairing-every' } });
    await stack.control('POST', '/sim/scan', { phone: owner, qr: connect.body.instance.qrcode });
    await waitFor(
      () => stack.gw.call('GET', '/instance/status', { token }),
      (r) => r.body.status?.connected === true,
      30_000,
      'connected',
    );
  }, 120_000);

  afterAll(async () => {
    await campaigns?.stop();
    await dispatcher?.stop();
    await relay?.stop();
    await receiver?.close();
    await stack.stop();
  });

  it('should deliver every event kind, signed, in the captures’ envelopes', async () => {
    const contactJid = `${contact}@s.whatsapp.net`;
    // messages (+ contacts): the contact writes.
    await stack.control('POST', `/sim/accounts/${contact}/send`, { to: owner, text: 'oi, tudo bem?' });
    await waitFor(
      () => stack.gw.call('POST', '/message/find', { token, body: { fromMe: false } }),
      (r) => r.body.returnedMessages > 0,
      20_000,
      'inbound message',
    );
    // messages_update: the contact reads what the API sent.
    const sent = (await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'tudo ótimo' } })).body;
    await waitFor(
      () => stack.inbox(contact, 1_000),
      (inbox) => inbox.some((entry) => entry.id === sent.messageid),
      15_000,
      'delivery to the contact',
    );
    await stack.control('POST', `/sim/accounts/${contact}/receipts`, { chat: owner, ids: [sent.messageid], type: 'read' });
    // presence: the contact types.
    await stack.control('POST', `/sim/accounts/${contact}/presence`, { type: 'composing', to: owner });
    // chats, labels, chat_labels: the phone pins the chat and labels it.
    await stack.control('POST', `/sim/accounts/${owner}/app-state`, { jid: contactJid, mod: { pin: true } });
    await stack.control('POST', `/sim/accounts/${owner}/app-state`, { mod: { addLabel: { id: '7', name: 'Cliente', color: 3 } } });
    await stack.control('POST', `/sim/accounts/${owner}/app-state`, { jid: contactJid, mod: { addChatLabel: { labelId: '7' } } });
    // groups: someone joins a group the instance is in.
    const group = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: contact, subject: 'Clientes', participants: [owner] });
    await stack.control('POST', `/sim/groups/${encodeURIComponent(group.jid)}/participants`, { actor: contact, action: 'add', participants: [member] });
    // call: the member calls.
    await stack.control('POST', `/sim/accounts/${member}/call`, { to: owner });
    // newsletter_messages: a followed channel posts.
    const channel = await stack.control<{ jid: string }>('POST', '/sim/newsletters', { owner: member, name: 'Ofertas', followers: [owner] });
    await stack.control('POST', `/sim/newsletters/${encodeURIComponent(channel.jid)}/posts`, { text: 'Promoção' });
    // sender: a campaign runs.
    expect(
      (
        await stack.gw.call('POST', '/sender/simple', {
          token,
          body: { numbers: [member], type: 'text', text: 'Campanha', folder: `every-${Date.now()}`, delayMin: 0, delayMax: 0, scheduled_for: 0 },
        })
      ).status,
    ).toBe(200);
    // blocks: the API blocks the member.
    expect((await stack.gw.call('POST', '/chat/block', { token, body: { number: member, block: true } })).status).toBe(200);

    await waitFor(
      async () => seenKinds(),
      (kinds) => EVENT_TYPES.every((kind) => kinds.has(kind)),
      90_000,
      'every event kind at the global webhook',
    ).catch((error: Error) => {
      throw new Error(`${error.message}; missing: ${EVENT_TYPES.filter((kind) => !seenKinds().has(kind)).join(', ')}`);
    });

    const global = delivered('/global/', globalSecret);
    for (const kind of EVENT_TYPES) {
      const entry = global.find((candidate) => candidate.event.EventType === kind)!;
      // The event's name goes on the path, before the webhook's own query string.
      expect(entry.path).toBe(`/global/${kind}?src=gw`);
      expect(entry.headers['webhook-id']).toMatch(/^evt_\d+$/);
      expect(entry.event.BaseUrl).toBe('https://gw.example');
      expect(entry.event.token).toBeUndefined();
      // The owner is known once paired (the first connection events come before): the latest of each kind has it.
      const latest = global.findLast((candidate) => candidate.event.EventType === kind)!;
      expect({ kind, instanceName: latest.event.instanceName, owner: latest.event.owner }).toEqual({ kind, instanceName, owner });
    }
    const first = (kind: string, accept: (event: Record<string, any>) => boolean = () => true) =>
      global.find((entry) => entry.event.EventType === kind && accept(entry.event))!.event;

    // The captured envelopes: the same top-level keys (less `token`), and the records' keys at least.
    const withoutToken = (value: Record<string, any>) => keysOf(value).filter((key) => key !== 'token');
    const connected = first('connection', (event) => event.instance.status === 'connected');
    expect(withoutToken(connected)).toEqual(withoutToken(capture('connection/connected.event.json')));
    expect(connected.instance).toMatchObject({ name: instanceName, status: 'connected' });
    const message = first('messages', (event) => event.message.fromMe === false && event.message.text === 'oi, tudo bem?');
    const messageCapture = capture('messages/user-chat/from-others/text.sent.json');
    expect(withoutToken(message)).toEqual(withoutToken(messageCapture));
    expect(keysOf(message.message)).toEqual(expect.arrayContaining(keysOf(messageCapture.message)));
    expect(keysOf(message.chat)).toEqual(expect.arrayContaining(keysOf(messageCapture.chat)));
    expect(message.message).toMatchObject({ chatid: contactJid, messageType: 'Conversation', isGroup: false, wasSentByApi: false });
    const joined = first('groups');
    const groupCapture = capture('groups/join.added.other.json');
    expect(withoutToken(joined)).toEqual(withoutToken(groupCapture));
    expect(keysOf(joined.event)).toEqual(keysOf(groupCapture.event));
    expect(joined.event).toMatchObject({ JID: group.jid, Join: [`${member}@s.whatsapp.net`] });
    // The others: the contract's shapes, with what happened in them.
    expect(first('history', (event) => event.messages.length > 0)).toMatchObject({
      request_id: 'pairing-every',
      messages: [expect.objectContaining({ messageid: 'HISTEVERY01' })],
    });
    // The contact's phone receipts delivery on its own before the read: announced apart or folded into the
    // stored copy, depending on which the worker handles first. The read is what this test makes happen.
    expect(first('messages_update', (event) => event.state === 'Read')).toMatchObject({
      type: 'ReadReceipt',
      state: 'Read',
      event: { MessageIDs: [sent.messageid], IsFromMe: 'True', IsGroup: 'False', Timestamp: expect.stringMatching(/^\d+$/) },
    });
    expect(first('presence', (event) => event.event.State === 'composing')).toMatchObject({ type: 'ChatPresence', event: { Chat: contactJid } });
    expect(first('chats', (event) => event.chats.some((chat: { wa_isPinned: boolean }) => chat.wa_isPinned))).toBeDefined();
    expect(first('labels')).toMatchObject({ label: { id: '7', name: 'Cliente' } });
    expect(first('chat_labels')).toMatchObject({ event: { labelid: '7', action: 'add' } });
    expect(first('blocks')).toMatchObject({ changes: [{ jid: `${member}@s.whatsapp.net`, action: 'block' }] });
    expect(first('call')).toMatchObject({ event: { from: `${member}@s.whatsapp.net`, status: 'offer' } });
    expect(first('newsletter_messages')).toMatchObject({ newsletter: channel.jid, message: { text: 'Promoção' } });
    expect(first('sender')).toMatchObject({ folder: expect.stringMatching(/^every-/) });
    expect(first('webhook')).toMatchObject({ type: 'Disabled', webhook: { url: `${receiver.url}/gone`, global: false, reason: '410 Gone from the receiver' } });

    // The instance webhook: its own secret, `/event[/messageType]` before its query string.
    const own = delivered('/inst/', instanceSecret);
    const ownMessage = own.find((entry) => entry.event.EventType === 'messages' && entry.event.message.messageid === message.message.messageid)!;
    expect(ownMessage.path).toBe('/inst/messages/Conversation?k=1');
    expect(ownMessage.headers['webhook-id']).toBe(global.find((entry) => entry.event === message)!.headers['webhook-id']);
    expect(own.find((entry) => entry.event.EventType === 'presence')!.path).toBe('/inst/presence?k=1');
  }, 180_000);
});
