import { DeliveryRepository, InstanceRepository, OutboxRepository, WebhookRepository } from '@gw/persistence';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { EXCLUDE_FLAGS, generateWebhookSecret, matchWebhooks, webhookWants } from '@gw/relay';

/**
 * Fan-out reads only the payload fields the filters read (issue #38): for every exclusion flag and
 * every shape of `message`, it decides as the whole payload would.
 */
describe('fan-out filters on the fields it reads', () => {
  let db: TestDatabase;

  beforeEach(async () => {
    db = await openTestDatabase();
  });
  afterEach(() => db.close());

  it('should make the deliveries the whole payloads would', async () => {
    const instanceId = `f${Math.random().toString(16).slice(2, 16)}`;
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: `tok-${instanceId}`, name: 'filters' });
    const webhooks = new WebhookRepository(db.dataSource);
    for (const flag of EXCLUDE_FLAGS)
      await webhooks.insert(
        `w-${flag}`,
        instanceId,
        {
          url: `http://127.0.0.1:9/${flag}`,
          enabled: true,
          events: [],
          excludeMessages: [flag],
          addUrlEvents: false,
          addUrlTypesMessages: false,
          includeToken: false,
        },
        generateWebhookSecret(),
      );
    const messages: unknown[] = [
      { wasSentByApi: true, fromMe: true, isGroup: true, text: 'x' },
      { wasSentByApi: false, fromMe: false, isGroup: false },
      { fromMe: 'true', isGroup: 1 },
      {},
      ['an', 'array'],
      'text',
      null,
      undefined,
    ];
    const events = messages.map((message) => ({
      eventType: 'messages',
      chatId: 'chat',
      payload: message === undefined ? { EventType: 'messages' } : { EventType: 'messages', message },
    }));
    await db.dataSource.transaction((manager) => new OutboxRepository(db.dataSource).within(manager).insert(instanceId, events));
    const rows = await webhooks.enabled(100);
    const expected = events.flatMap((event, index) =>
      rows.filter((row) => webhookWants(row, event.eventType, event.payload)).map((row) => `${index} ${row.id}`),
    );

    await new DeliveryRepository(db.dataSource).fanOut(100, matchWebhooks);
    const made: Array<{ event_id: string; webhook_id: string }> = await db.dataSource.query(
      `SELECT d.event_id, d.webhook_id FROM webhook_deliveries d ORDER BY d.event_id, d.webhook_id`,
    );
    const firstId = Math.min(...made.map((row) => Number(row.event_id)));
    expect(made.map((row) => `${Number(row.event_id) - firstId} ${row.webhook_id}`).sort()).toEqual(expected.sort());
    expect(expected.length).toBeGreaterThan(events.length);
  });
});
