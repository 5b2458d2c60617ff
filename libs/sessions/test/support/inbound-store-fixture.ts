import { InProcessBus } from '@gw/bus';
import { InstanceRepository, LeaseRepository, MessageRepository, type Lease, type NewOutboxEvent, type Tx } from '@gw/persistence';
import { newMessageFixture, openTestDatabase, type TestDatabase } from '@gw/testing';
import pino from 'pino';

/**
 * What the InboundStore specs share: a test database (opened before the suite, closed after), a bus and
 * a logger for the store, instances claimed by `worker-a`, a received message's write and the events
 * it left. Call inside a `describe`; read its fields inside the tests.
 */
export function inboundStoreFixture() {
  const fixture = {
    db: undefined as unknown as TestDatabase,
    leases: undefined as unknown as LeaseRepository,
    bus: new InProcessBus(),
    logger: pino({ level: 'silent' }),
    /** A new instance, its lease held by `worker-a` (each try of a test its own: jest retries). */
    claim: async (name: string): Promise<Lease> => {
      const id = `${name}-${++tries}`;
      await new InstanceRepository(fixture.db.dataSource).create({ id, token: `tok-${id}`, name: id });
      return (await fixture.leases.claim(id, 'worker-a', 60_000))!;
    },
    /** A received message's row. */
    message: (instanceId: string, key: string) => newMessageFixture(instanceId, { messageId: key, fromMe: false }),
    /** A received message's write: inserts its row keyed by (instance, message id) once and events it; false when it was there. */
    receive:
      (instanceId: string, key: string) =>
      async (tx: Tx, events: NewOutboxEvent[]): Promise<boolean> => {
        const rows = await new MessageRepository(fixture.db.dataSource).within(tx).insertNew([fixture.message(instanceId, key)]);
        if (rows.length === 0) return false;
        events.push({ eventType: 'messages', chatId: 'c', payload: { messageId: key } });
        return true;
      },
    /** The instance's events' keys, in the relay's order (commit, then id). */
    events: async (instanceId: string): Promise<string[]> =>
      (
        (await fixture.db.dataSource.query(`SELECT payload->>'messageId' AS key FROM outbox_events WHERE instance_id = $1 ORDER BY tx, id`, [
          instanceId,
        ])) as Array<{ key: string }>
      ).map((row) => row.key),
  };
  let tries = 0;
  beforeAll(async () => {
    fixture.db = await openTestDatabase();
    fixture.leases = new LeaseRepository(fixture.db.dataSource);
  });
  afterAll(async () => {
    await fixture.bus.close();
    await fixture.db.close();
  });
  return fixture;
}
