import { ASYNC_DISPATCHER_DEFAULTS, AsyncDispatcher } from '@gw/dispatch';
import { ChatRepository, InstanceRepository, SendQueueRepository } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { nextPhone, Stack, waitFor } from './support/stack';

/** async=true through the whole stack: queued at once, sent by the dispatcher, received by the phone. */
describe('async send queue (HTTP → queue → dispatcher → worker → simulated phone)', () => {
  const stack = new Stack();
  let dispatcher: AsyncDispatcher;
  let token: string;
  let instanceId: string;
  let contact: string;

  const status = async (messageId: string) =>
    (
      (await stack.db.dataSource.query(`SELECT status FROM messages WHERE instance_id = $1 AND message_id = $2`, [instanceId, messageId])) as Array<{
        status: string;
      }>
    )[0]?.status;

  beforeAll(async () => {
    await stack.start();
    ({ token, id: instanceId } = await stack.connectedInstance('async-sender'));
    contact = nextPhone('5541');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
    dispatcher = new AsyncDispatcher(
      new SendQueueRepository(stack.db.dataSource),
      new InstanceRepository(stack.db.dataSource),
      new ChatRepository(stack.db.dataSource),
      stack.bus,
      { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: 'e2e', pollIntervalMs: 200 },
      createLogger('dispatcher', 'silent'),
    );
  }, 60_000);

  afterAll(async () => {
    await dispatcher?.stop();
    await stack.stop();
  });

  it('should answer an async send 401 once its instance is deleted, even with its token looked up a moment ago', async () => {
    const gone = await stack.gw.createInstance('soon-deleted');
    const first = await stack.gw.call('POST', '/send/text', { token: gone.token, body: { number: contact, text: 'antes', async: true } });
    expect(first).toMatchObject({ status: 200, body: { status: 'Queued' } });
    expect((await stack.gw.call('DELETE', '/instance', { token: gone.token })).status).toBe(200);
    const after = await stack.gw.call('POST', '/send/text', { token: gone.token, body: { number: contact, text: 'depois', async: true } });
    expect(after).toEqual({ status: 401, body: expect.objectContaining({ error: 'Invalid token' }) });
  });

  it('should answer 200 Queued at once, then deliver the message and mark it Sent', async () => {
    const { status: code, body } = await stack.gw.call('POST', '/send/text', {
      token,
      body: { number: contact, text: 'Olá em fila', async: true, track_id: 'A-1' },
    });
    expect(code).toBe(200);
    expect(body).toMatchObject({ status: 'Queued', fromMe: true, text: 'Olá em fila', track_id: 'A-1', sendFunction: 'SendTextMessage' });
    expect(body.response).toEqual({ status: 'success', message: 'Message queued successfully' });
    const queued = await stack.gw.call('GET', '/message/async', { token });
    expect(queued).toEqual({
      status: 200,
      body: {
        response: 'Async queue status',
        instanceId,
        queue: { status: 'queued', pending: 1, processingNow: false, acceptingNewMessages: true, sessionReady: true, resetting: false },
      },
    });

    dispatcher.start();
    const inbox = await waitFor(
      () => stack.inbox(contact, 1_000),
      (entries) => entries.some((entry) => entry.id === body.messageid),
      15_000,
      'queued message at the phone',
    );
    const message = inbox.find((entry) => entry.id === body.messageid)!;
    expect(message.message.extendedTextMessage?.text ?? message.message.conversation).toBe('Olá em fila');
    await waitFor(
      () => status(body.messageid),
      (value) => value === 'Sent' || value === 'Delivered' || value === 'Read',
      10_000,
      'status Sent',
    );
    const idle = await stack.gw.call('GET', '/message/async', { token });
    expect(idle.body.queue).toMatchObject({ status: 'idle', pending: 0 });
  });

  it('should clear the queue with DELETE /message/async and cancel what was pending', async () => {
    await dispatcher.stop();
    const sent = [];
    for (let n = 0; n < 3; n++)
      sent.push((await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: `fila ${n}`, async: true } })).body);
    const cleared = await stack.gw.call('DELETE', '/message/async', { token });
    expect(cleared).toEqual({
      status: 200,
      body: {
        response: 'Async queue cleared',
        instanceId,
        stats: { trackedJobsCleared: 3, bufferedJobsMarkedCanceled: 0, drainedChannelJobs: 0, clearedOverflowJobs: 0, persistedQueuedCanceled: 3 },
      },
    });
    for (const message of sent) expect(await status(message.messageid)).toBe('Canceled');
  });
});
