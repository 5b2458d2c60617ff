/** The bare client's process: an undici client (or an amqplib publisher, or a NATS JetStream publisher) posting the same bodies at the relay's concurrency. */
import { eventFor, type EventPayload } from './events';
import { send } from './ipc';
import { cpuMs, cpuMsSince, inFlightMeter, paced } from './load';
import { args, BURST, log, natsServers, num, PRE_SECONDS, RATE, SECONDS, SINK } from './options';

export async function runBare(): Promise<void> {
  const concurrency = num('inflight', 8);
  const inFlight = inFlightMeter(concurrency);
  const url = args.get('url') as string;
  let post: (payload: EventPayload) => Promise<void>;
  let closeClient: () => Promise<void>;
  if (SINK === 'rabbitmq') {
    // A bare amqplib publish loop: a confirm channel, persistent messages, each awaited as the sink does.
    const { connect } = await import('amqplib');
    const connection = await connect(url);
    const channel = await connection.createConfirmChannel();
    const exchange = args.get('exchange') as string;
    let n = 0;
    post = (payload) =>
      new Promise<void>((resolve, reject) => {
        const body = Buffer.from(JSON.stringify({ BaseUrl: 'http://gateway.bench', ...payload }));
        channel.publish(exchange, `bench.messages`, body, { persistent: true, messageId: `bare_${++n}`, contentType: 'application/json' }, (error: unknown) =>
          error ? reject(error as Error) : resolve(),
        );
      });
    closeClient = () => connection.close();
  } else if (SINK === 'nats') {
    // A bare JetStream publish loop: each message a request to its subject with the sink's headers, answered by
    // the stream's PubAck once stored, each awaited as the sink does.
    const { connect, headers } = await import('@nats-io/transport-node');
    // Configured as the relay's sink is (no stack captured per request): the bare client at its best.
    const connection = await connect({ servers: natsServers(url), noAsyncTraces: true });
    const subject = `${args.get('exchange') as string}.bare.messages`;
    let n = 0;
    post = async (payload) => {
      const body = JSON.stringify({ BaseUrl: 'http://gateway.bench', ...payload });
      const header = headers();
      header.set('Nats-Msg-Id', `bare_${++n}`);
      header.set('Content-Type', 'application/json');
      header.set('Wa-Instance', 'bare');
      header.set('Wa-Event', 'messages');
      const ack = (await connection.request(subject, body, { timeout: 10_000, headers: header })).json<{ error?: { description?: string } }>();
      if (ack.error) throw new Error(`JetStream refused the message: ${ack.error.description ?? 'error'}`);
    };
    closeClient = () => connection.close();
  } else {
    const { Agent, request } = await import('undici');
    const agent = new Agent({ keepAliveTimeout: 10_000 });
    post = async (payload: EventPayload) => {
      const body = JSON.stringify({ BaseUrl: 'http://gateway.bench', ...payload });
      const response = await request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'bench-bare/1' },
        dispatcher: agent,
      });
      await response.body.text();
    };
    closeClient = () => agent.close();
  }
  /** A queue drained by `concurrency` workers: the relay's in-flight limit towards one receiver. */
  const queue: EventPayload[] = [];
  let active = 0;
  let idle: (() => void) | undefined;
  const pump = () => {
    while (active < concurrency && queue.length) {
      const payload = queue.shift() as EventPayload;
      active++;
      void post(payload)
        .catch((error: unknown) => log(`bare post failed: ${String(error)}`))
        .finally(() => {
          active--;
          pump();
          if (active === 0 && queue.length === 0) idle?.();
        });
    }
  };
  const drained = () => (active === 0 && queue.length === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve)));

  /** `seconds` at the rate, then until every post is answered. */
  const paceAndDrain = async (phase: 'bare-pre' | 'bare-steady', seconds: number) => {
    await paced(RATE, seconds, (from, to) => {
      const now = Date.now();
      for (let seq = from; seq < to; seq++) queue.push(eventFor(phase, seq, now).payload);
      pump();
    });
    await drained();
  };

  process.on('message', (message: { id: number; cmd: string }) => {
    void (async () => {
      if (message.cmd === 'pre') await paceAndDrain('bare-pre', PRE_SECONDS);
      else if (message.cmd === 'steady') await paceAndDrain('bare-steady', SECONDS);
      else if (message.cmd === 'burst') {
        const now = Date.now();
        inFlight.start();
        for (let seq = 0; seq < BURST; seq++) queue.push(eventFor('bare-burst', seq, now).payload);
        pump();
        await drained();
      } else if (message.cmd === 'stop') {
        await closeClient();
        send({ id: message.id, cpuMs: cpuMs(), cpuAfterStart: cpuMsSince(readyCpu), inFlight: SINK === 'webhook' ? inFlight.read() : null });
        process.exit(0);
      }
      send({ id: message.id });
    })();
  });
  const readyCpu = process.cpuUsage();
  send({ ready: true });
}
