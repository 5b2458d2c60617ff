import { ASYNC_DISPATCHER_DEFAULTS, AsyncDispatcher, type AsyncDispatcherConfig } from '@gw/dispatch';
import { ChatRepository, InstanceRepository, SendQueueRepository } from '@gw/persistence';
import { nextPhone, waitFor } from './support/stack';
import { TakeoverStack } from './support/takeover-stack';

jest.setTimeout(180_000);

/**
 * Crash safety of the async queue with real parts: two session workers (real Baileys) against the
 * simulator, the gateway over HTTP, the dispatcher. Mid-queue, the worker holding the instance dies
 * like `kill -9` (SessionWorker.halt: sockets dropped, nothing written or released) and the other
 * adopts the session once the lease lapses; then, mid-queue again, the dispatcher dies the same way
 * (AsyncDispatcher.kill) and another takes over its lane once the claim lapses. The phone must get
 * every queued message exactly once, in the order the sends were accepted.
 */
describe('async queue crash safety (real session workers, simulator)', () => {
  const stack = new TakeoverStack('crash-e2e');
  const dispatchers: AsyncDispatcher[] = [];
  let instanceId: string;
  let token: string;
  let contact: string;

  const startDispatcher = (dispatcherId: string, overrides: Partial<AsyncDispatcherConfig> = {}) => {
    const dispatcher = new AsyncDispatcher(
      new SendQueueRepository(stack.db.dataSource),
      new InstanceRepository(stack.db.dataSource),
      new ChatRepository(stack.db.dataSource),
      stack.bus,
      // A send that hangs in a dead worker times out and is handed over again (same ids); the claim of
      // a dead dispatcher lapses after claimMs.
      {
        ...ASYNC_DISPATCHER_DEFAULTS,
        dispatcherId,
        pollIntervalMs: 200,
        claimMs: 4_000,
        sendTimeoutMs: 8_000,
        retryBackoffMs: [500],
        disconnectedRetryMs: 500,
        maxAttempts: 10,
        ...overrides,
      },
      stack.logger,
    );
    dispatchers.push(dispatcher);
    dispatcher.start();
    return dispatcher;
  };

  const holderOf = () => stack.holderOf(instanceId);
  const relayedCount = async (ids: string[]) =>
    Number(
      (
        (await stack.db.dataSource.query(
          `SELECT count(*) AS n FROM messages WHERE instance_id = $1 AND message_id = ANY($2::text[]) AND relayed_at IS NOT NULL`,
          [instanceId, ids],
        )) as Array<{ n: string }>
      )[0].n,
    );

  /** Accepts `count` async sends one after the other (so their order is defined) and returns their ids. */
  const queue = async (label: string, count: number, typingMs = 0): Promise<string[]> => {
    const ids: string[] = [];
    for (let n = 1; n <= count; n++) {
      const response = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: `${label}-${n}`, async: true, delay: typingMs } });
      if (response.status !== 200 || response.body.status !== 'Queued')
        throw new Error(`queue ${label}-${n}: ${response.status} ${JSON.stringify(response.body)}`);
      ids.push(response.body.messageid as string);
    }
    return ids;
  };

  /** Waits until the phone has every id, then checks: each exactly once, in acceptance order, all Sent. */
  const expectDeliveredOnceInOrder = async (ids: string[]) => {
    const inbox = await waitFor(
      () => stack.control<Array<{ id: string; seq: number }>>('GET', `/sim/accounts/${contact}/inbox`),
      (entries) => ids.every((id) => entries.some((entry) => entry.id === id)),
      120_000,
      'every queued message at the phone',
    ).catch(async (error: Error) => {
      // Say which are missing and where they stand.
      const entries = await stack.control<Array<{ id: string }>>('GET', `/sim/accounts/${contact}/inbox`);
      const rows: Array<Record<string, unknown>> = await stack.db.dataSource.query(
        `SELECT m.message_id, m.text, m.status, m.error, m.relayed_at IS NOT NULL AS relayed, q.attempts, q.last_error FROM messages m LEFT JOIN send_queue q ON q.message_id = m.message_id WHERE m.instance_id = $1 AND m.message_id = ANY($2::text[])`,
        [instanceId, ids],
      );
      const missing = rows.filter((row) => !entries.some((entry) => entry.id === row.message_id));
      throw new Error(`${error.message.slice(0, 60)}; missing at the phone: ${JSON.stringify(missing)}`);
    });
    const received = inbox
      .filter((entry) => ids.includes(entry.id))
      .sort((a, b) => a.seq - b.seq)
      .map((entry) => entry.id);
    // None sent twice (the phone keeps every copy it decrypts), none lost, order as accepted.
    expect(received).toEqual(ids);
    // The phone can hold the last message a moment before the worker has recorded its server ack.
    const rows = await waitFor(
      () =>
        stack.db.dataSource.query(`SELECT message_id, status FROM messages WHERE instance_id = $1 AND message_id = ANY($2::text[])`, [
          instanceId,
          ids,
        ]) as Promise<Array<{ message_id: string; status: string }>>,
      (found) => found.length === ids.length && found.every((row) => ['Sent', 'Delivered', 'Read'].includes(row.status)),
      30_000,
      'every queued message recorded as sent',
    ).catch(
      async () =>
        stack.db.dataSource.query(`SELECT message_id, status FROM messages WHERE instance_id = $1 AND message_id = ANY($2::text[])`, [
          instanceId,
          ids,
        ]) as Promise<Array<{ message_id: string; status: string }>>,
    );
    expect(rows).toHaveLength(ids.length);
    for (const row of rows) expect(['Sent', 'Delivered', 'Read']).toContain(row.status);
    await waitFor(
      async () =>
        Number(((await stack.db.dataSource.query(`SELECT count(*) AS n FROM send_queue WHERE instance_id = $1`, [instanceId])) as Array<{ n: string }>)[0].n),
      (n) => n === 0,
      30_000,
      'the queue empty',
    );
  };

  beforeAll(async () => {
    await stack.start(['worker-a', 'worker-b']);

    const phone = nextPhone('5543');
    await stack.control('POST', '/sim/accounts', { phone, name: 'Loja' });
    ({ id: instanceId, token } = await stack.gw.createInstance('crash-sender'));
    const connect = await stack.gw.call('POST', '/instance/connect', { token, body: {} });
    if (connect.status !== 200) throw new Error(`connect: ${connect.status} ${JSON.stringify(connect.body)}`);
    await stack.control('POST', '/sim/scan', { phone, qr: connect.body.instance.qrcode });
    await waitFor(
      () => stack.gw.call('GET', '/instance/status', { token }),
      (r) => r.body.status?.connected === true,
      30_000,
      'connected',
    );
    contact = nextPhone('5544');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
    // One second between sends: the queue is still mid-way when the crashes come.
    const delays = await stack.gw.call('POST', '/instance/updateDelaySettings', { token, body: { msg_delay_min: 1, msg_delay_max: 1 } });
    if (delays.status !== 200) throw new Error(`delays: ${delays.status} ${JSON.stringify(delays.body)}`);
  }, 90_000);

  // Jest retries a failed test: each starts from two live workers and a connected instance, no dispatcher.
  beforeEach(async () => {
    for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop().catch(() => undefined);
    for (const workerId of ['worker-a', 'worker-b']) if (!stack.workers.has(workerId)) await stack.startWorker(workerId);
    await waitFor(
      () => stack.gw.call('GET', '/instance/status', { token }),
      (r) => r.body.status?.connected === true,
      60_000,
      'connected',
    );
    await waitFor(
      () => holderOf(),
      (worker) => worker !== null,
      60_000,
      'a worker holding the instance',
    );
  }, 130_000);

  afterAll(async () => {
    for (const dispatcher of dispatchers) await dispatcher.stop().catch(() => undefined);
    await stack.stop();
  });

  it('should lose nothing, send nothing twice and keep the order when the session worker dies mid-queue', async () => {
    const ids = await queue('worker-crash', 10);
    startDispatcher('d1');
    // The crash comes in a pacing gap: a few sent, the rest queued. (A send caught inside the halted
    // worker is not what kill -9 does to it: halt() cannot stop a send already running in this process,
    // which would still write its outcome. The in-flight resend is the dispatcher test's below.)
    await waitFor(
      () => relayedCount(ids),
      (n) => n >= 3,
      60_000,
      'the first sends relayed',
    );
    await waitFor(
      async () => (await stack.db.dataSource.query(`SELECT in_flight_id FROM send_lanes WHERE instance_id = $1`, [instanceId]))[0]?.in_flight_id ?? null,
      (inFlight) => inFlight === null,
      60_000,
      'a pacing gap',
    );

    const holder = await holderOf();
    expect(holder).not.toBeNull();
    const survivor = holder === 'worker-a' ? 'worker-b' : 'worker-a';
    stack.halt(holder!); // kill -9: sockets dropped, the lease left to lapse, nothing written
    expect(await relayedCount(ids)).toBeLessThan(ids.length);

    await waitFor(
      () => holderOf(),
      (worker) => worker === survivor,
      60_000,
      'adoption by the surviving worker',
    ).catch(async (error: Error) => {
      const leases = await stack.db.dataSource.query(`SELECT worker_id, expires_at, now() AS now FROM session_leases WHERE instance_id = $1`, [instanceId]);
      const instance = await stack.db.dataSource.query(`SELECT status, desired_state FROM instances WHERE id = $1`, [instanceId]);
      throw new Error(`${error.message}; leases ${JSON.stringify(leases)}; instance ${JSON.stringify(instance)}`);
    });
    await expectDeliveredOnceInOrder(ids);
  });

  it('should lose nothing, send nothing twice and keep the order when the dispatcher dies mid-queue', async () => {
    // Each send types for 1.5 s in the worker first, so the crash catches one in flight.
    const ids = await queue('dispatcher-crash', 8, 1_500);
    const doomed = startDispatcher('d2');
    await waitFor(
      () => relayedCount(ids),
      (n) => n >= 2,
      60_000,
      'the first sends relayed',
    );
    const inFlight = await waitFor(
      async () =>
        (await stack.db.dataSource.query(`SELECT message_id FROM messages WHERE instance_id = $1 AND message_id = ANY($2::text[]) AND status = 'Pending'`, [
          instanceId,
          ids,
        ])) as Array<{ message_id: string }>,
      (rows) => rows.length === 1,
      60_000,
      'a send in flight in the worker',
    );
    doomed.kill(); // kill -9: its lane claim is left to lapse, the worker's answer to it is lost
    expect(await relayedCount(ids)).toBeLessThan(ids.length);
    // Its queue row stays (a dead dispatcher deletes nothing): the heir must hand that very request over
    // again, after the claim lapses (4 s), by when the worker has relayed it.
    expect(await stack.db.dataSource.query(`SELECT message_id FROM send_queue WHERE instance_id = $1 ORDER BY id LIMIT 1`, [instanceId])).toEqual([
      { message_id: inFlight[0].message_id },
    ]);

    // The heir hands the same request (same id) over again once the claim lapses: the worker, having
    // relayed it already, answers from its store instead of sending it a second time.
    startDispatcher('d3');
    await expectDeliveredOnceInOrder(ids);
    expect(ids).toContain(inFlight[0].message_id);
  });
});
