import { DeliveryRepository, InstanceRepository, OutboxRepository, WebhookRepository } from '@gw/persistence';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { generateWebhookSecret, matchWebhooks } from '@gw/relay';

/**
 * DeliveryRepository.markDeliveredAndClaimNext (issue #38): a flush of successes claims the next run of
 * each lane it moved on, in the same statement, with claimDue's rules: from the lane's head, unbroken,
 * never a row someone holds or one due later, lanes of excluded webhooks left alone.
 */
describe('recording successes and claiming the next run of their lanes', () => {
  let db: TestDatabase;
  let sut: DeliveryRepository;
  let instanceId = '';
  let webhookId = '';

  /** `perLane` events in each of `lanes` chats, interleaved, fanned out; each payload names its lane and number. */
  const emit = async (lanes: number, perLane: number) => {
    const events: Array<{ eventType: string; chatId: string; payload: Record<string, unknown> }> = [];
    for (let n = 0; n < perLane; n++) {
      for (let lane = 0; lane < lanes; lane++) events.push({ eventType: 'messages', chatId: `chat-${lane}`, payload: { lane: `chat-${lane}`, n } });
    }
    await db.dataSource.transaction((manager) => new OutboxRepository(db.dataSource).within(manager).insert(instanceId, events));
    await sut.fanOut(1_000, matchWebhooks);
  };
  const delivered = (claims: Array<{ deliveryId: string }>) => claims.map((claim) => ({ deliveryId: claim.deliveryId, statusCode: 200, latencyMs: 2 }));
  const numbers = (claims: Array<{ position: number; event: { payload: Record<string, unknown> } }>) =>
    claims.map((claim) => [claim.event.payload.lane, claim.position, claim.event.payload.n]);

  beforeEach(async () => {
    db = await openTestDatabase();
    sut = new DeliveryRepository(db.dataSource);
    instanceId = `c${Math.random().toString(16).slice(2, 16)}`;
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: `tok-${instanceId}`, name: 'continuation' });
    webhookId = `w${Math.random().toString(16).slice(2, 10)}`;
    await new WebhookRepository(db.dataSource).insert(
      webhookId,
      instanceId,
      { url: 'http://127.0.0.1:9/hook', enabled: true, events: [], excludeMessages: [], addUrlEvents: false, addUrlTypesMessages: false, includeToken: false },
      generateWebhookSecret(),
    );
  });
  afterEach(() => db.close());

  it('should record the successes and claim the next run of each of their lanes, in order', async () => {
    await emit(2, 6);
    const first = await sut.claimDue(100, 30_000, { perLane: 2 });
    const next = await sut.markDeliveredAndClaimNext(delivered(first), 100, 30_000, { perLane: 3 });
    expect(numbers(next)).toEqual([
      ['chat-0', 1, 2],
      ['chat-0', 2, 3],
      ['chat-0', 3, 4],
      ['chat-1', 1, 2],
      ['chat-1', 2, 3],
      ['chat-1', 3, 4],
    ]);
    expect(new Set(next.map((claim) => claim.headId)).size).toBe(2);
    expect(await sut.countByStatus()).toEqual({ delivered: 4, pending: 8 });
    // Claimed: nobody else takes them; the last row of each lane is still free.
    expect(numbers(await sut.claimDue(100, 30_000, { perLane: 5 }))).toEqual([]);
    const last = await sut.markDeliveredAndClaimNext(delivered(next), 100, 30_000, { perLane: 3 });
    expect(numbers(last)).toEqual([
      ['chat-0', 1, 5],
      ['chat-1', 1, 5],
    ]);
  });

  it('should claim nothing behind a row still claimed, due later, or of an excluded webhook', async () => {
    await emit(1, 6);
    const [head, second, third] = await sut.claimDue(100, 30_000, { perLane: 3 });
    // Part of a run recorded: the rest of it is still ours, so the lane is not claimed on.
    expect(await sut.markDeliveredAndClaimNext(delivered([head]), 100, 30_000, { perLane: 3 })).toEqual([]);
    // The run's next attempt failed: its lane waits for the retry.
    await sut.markAttemptFailed(third.deliveryId, webhookId, 503, 'receiver answered 503', new Date(Date.now() + 60_000));
    expect(await sut.markDeliveredAndClaimNext(delivered([second]), 100, 30_000, { perLane: 3 })).toEqual([]);
    expect(await sut.countByStatus()).toEqual({ delivered: 2, pending: 4 });

    await db.dataSource.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1`, [third.deliveryId]);
    const [retry] = await sut.claimDue(100, 30_000, { perLane: 1 });
    expect(await sut.markDeliveredAndClaimNext(delivered([retry]), 100, 30_000, { perLane: 3, excludeWebhooks: [webhookId] })).toEqual([]);
    expect(await sut.countByStatus()).toEqual({ delivered: 3, pending: 3 });
  });

  it('should claim on only the lanes whose run a success ended', async () => {
    await emit(2, 3);
    const first = await sut.claimDue(100, 30_000, { perLane: 1 });
    const results = delivered(first).map((result, index) => ({ ...result, endsRun: index === 1 }));
    const next = await sut.markDeliveredAndClaimNext(results, 100, 30_000, { perLane: 3 });
    expect(numbers(next)).toEqual([
      ['chat-1', 1, 1],
      ['chat-1', 2, 2],
    ]);
    expect(await sut.countByStatus()).toEqual({ delivered: 2, pending: 4 });
  });

  it('should claim a row made pending again (a replay, older than the lane) first', async () => {
    await emit(1, 4);
    const [head] = await sut.claimDue(100, 30_000, { perLane: 1 });
    await sut.markDelivered(delivered([head]));
    const [second] = await sut.claimDue(100, 30_000, { perLane: 1 });
    // The first event is replayed while the second is being sent: it is the lane's head again.
    await db.dataSource.query(`UPDATE webhook_deliveries SET status = 'pending', claimed_until = NULL WHERE id = $1`, [head.deliveryId]);
    const next = await sut.markDeliveredAndClaimNext(delivered([second]), 100, 30_000, { perLane: 3 });
    expect(numbers(next)).toEqual([
      ['chat-0', 1, 0],
      ['chat-0', 2, 2],
      ['chat-0', 3, 3],
    ]);
  });

  it('should claim at most the limit, breadth first', async () => {
    await emit(3, 4);
    const first = await sut.claimDue(100, 30_000, { perLane: 1 });
    const next = await sut.markDeliveredAndClaimNext(delivered(first), 4, 30_000, { perLane: 3 });
    expect(next.map((claim) => claim.position).sort()).toEqual([1, 1, 1, 2]);
  });

  it('should find the rows and lanes by index, not by scanning every pending delivery', async () => {
    // A backlog: 4,000 pending deliveries in 40 lanes, and the statistics a running database would have.
    await emit(40, 100);
    await db.dataSource.query('ANALYZE webhook_deliveries');
    const first = await sut.claimDue(500, 30_000, { perLane: 20 });
    const query = jest.spyOn(db.dataSource, 'query');
    const next = await sut.markDeliveredAndClaimNext(delivered(first), 500, 30_000, { perLane: 20 });
    const [[text, values]] = query.mock.calls as Array<[string, unknown[]]>;
    query.mockRestore();
    expect(next).toHaveLength(500);
    const [{ 'QUERY PLAN': plan }] = await db.dataSource.query(`EXPLAIN (FORMAT JSON) ${text}`, values);
    const scans: string[] = [];
    const walk = (node: { 'Node Type': string; 'Relation Name'?: string; Plans?: unknown[] }) => {
      if (node['Relation Name'] === 'webhook_deliveries') scans.push(node['Node Type']);
      for (const child of node.Plans ?? []) walk(child as typeof node);
    };
    walk((plan as Array<{ Plan: Parameters<typeof walk>[0] }>)[0].Plan);
    expect(scans.length).toBeGreaterThan(0);
    expect(scans).not.toContain('Seq Scan');
  });
});
