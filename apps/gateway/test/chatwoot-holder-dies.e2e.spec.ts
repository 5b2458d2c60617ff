import { ChatwootSync, whatsappIdsOf } from '@gw/chatwoot';
import { ChatwootRepository, FileRepository, LidMappingRepository, OutboxCursorRepository } from '@gw/persistence';
import { ChatwootStack } from './support/chatwoot-stack';
import { FakeChatwoot } from './support/fake-chatwoot';
import { nextPhone, sleep, waitFor, type InboxEntry } from './support/stack';
import { TakeoverStack } from './support/takeover-stack';

/**
 * The Chatwoot bridge when the session worker holding the instance dies (kill -9) with an agent's
 * reply in its hands: the runner hears nothing, retries after its worker timeout, and the heir (once
 * it has adopted the instance) sends the reply under the same fixed id: the contact gets it once, and
 * the job is done.
 */
describe('Chatwoot → WhatsApp when the holding worker dies', () => {
  const stack = new TakeoverStack('e2e-chatwoot');
  const cw = new FakeChatwoot();
  let sync: ChatwootSync;

  beforeAll(async () => {
    await stack.start(['worker-a', 'worker-b']);
    await cw.start();
  }, 60_000);

  afterAll(async () => {
    await sync?.stop();
    await cw.stop();
    await stack.stop();
  });

  it("should send an agent's reply once through the heir", async () => {
    const phone = nextPhone('5526');
    const contact = nextPhone('5527');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Eva' });
    const { id } = await stack.linkedInstance('chatwoot-failover', phone);
    // The settings as PUT /chatwoot/config saves them (this gateway's SSRF guard has no loopback allowance for the fake's URL).
    const ds = stack.db.dataSource;
    const repository = new ChatwootRepository(ds);
    const secret = 'cw_holder-dies-secret';
    await repository.saveConfig(
      id,
      {
        enabled: true,
        url: cw.baseUrl,
        accessToken: cw.token,
        accountId: cw.accountId,
        inboxId: cw.inboxId,
        ignoreGroups: false,
        signMessages: false,
        createNewConversation: false,
      },
      secret,
    );
    cw.webhookUrl = `${stack.gw.baseUrl}/chatwoot/webhook/${id}/${secret}`;
    // The worker's answer is awaited 10 s here (60 s by default); the lease TTL is 8 s.
    sync = new ChatwootSync(
      new OutboxCursorRepository(ds),
      repository,
      new LidMappingRepository(ds),
      new FileRepository(ds),
      stack.bus,
      ChatwootStack.syncConfig({ workerTimeoutMs: 10_000 }),
      stack.logger,
    );
    sync.start();

    await stack.control('POST', `/sim/accounts/${contact}/send`, { to: phone, text: 'preciso falar com alguém' });
    const conversation = await waitFor(
      async () => {
        const person = cw.contactByPhone(contact);
        return person ? cw.conversationOf(person) : undefined;
      },
      (found) => found !== undefined,
      20_000,
      'the conversation in Chatwoot',
    );

    // The holder stops with the reply in its hands, then dies.
    const holder = await stack.holderOf(id);
    stack.freeze(holder!);
    const webhook = await cw.agentReply(conversation!.id, 'Olá Eva, estou aqui');
    const waId = whatsappIdsOf(id, webhook.id as number, 0).messageId;
    await waitFor(
      () => ds.query(`SELECT claimed_by FROM chatwoot_jobs WHERE instance_id = $1 AND dedupe_key = $2`, [id, `cw:${webhook.id}:send`]),
      (rows: Array<{ claimed_by: string | null }>) => Boolean(rows[0]?.claimed_by),
      10_000,
      'the reply claimed by the runner',
    );
    await sleep(300);
    stack.halt(holder!);

    await waitFor(
      () => stack.control<InboxEntry[]>('GET', `/sim/accounts/${contact}/inbox`),
      (entries) => entries.some((entry) => entry.id === waId),
      40_000,
      'the reply delivered by the heir',
    );
    expect(await stack.holderOf(id)).not.toBe(holder);
    await waitFor(
      () => repository.pending(id),
      (pending) => pending.length === 0,
      20_000,
      'the jobs done',
    );
    const [job] = await ds.query(`SELECT attempts, outcome FROM chatwoot_jobs WHERE instance_id = $1 AND dedupe_key = $2`, [id, `cw:${webhook.id}:send`]);
    expect(job.outcome).toBe('done');
    expect(job.attempts).toBeGreaterThanOrEqual(2);
    await sleep(500);
    const inbox = await stack.control<InboxEntry[]>('GET', `/sim/accounts/${contact}/inbox`);
    expect(inbox.filter((entry) => entry.id === waId)).toHaveLength(1);
    expect(inbox.filter((entry) => JSON.stringify(entry.message).includes('Olá Eva, estou aqui'))).toHaveLength(1);
    // Its own `messages` event was recognised as the reply's, not copied back into Chatwoot.
    expect(cw.messages.filter((message) => message.content === 'Olá Eva, estou aqui')).toHaveLength(1);
  }, 90_000);
});
