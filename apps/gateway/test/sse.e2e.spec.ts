import { connect, type Socket } from 'node:net';
import { Subjects } from '@gw/contracts';
import { OutboxRepository } from '@gw/persistence';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

interface Frame {
  id?: string;
  event?: string;
  data?: unknown;
  comment?: string;
}

/** Reads SSE frames from a streaming response until `count` data frames (or comments) arrived. */
async function openStream(url: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  const frames: Frame[] = [];
  let buffer = '';
  const reader = response.body!.getReader();
  const pump = (async () => {
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let index;
        while ((index = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, index);
          buffer = buffer.slice(index + 2);
          const frame: Frame = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) frame.comment = line.slice(1).trim();
            else if (line.startsWith('id: ')) frame.id = line.slice(4);
            else if (line.startsWith('event: ')) frame.event = line.slice(7);
            else if (line.startsWith('data: ')) frame.data = JSON.parse(line.slice(6));
          }
          frames.push(frame);
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    frames,
    dataFrames: () => frames.filter((frame) => frame.data !== undefined),
    close: async () => {
      controller.abort();
      await pump;
    },
  };
}

const waitFor = async (check: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe('GET /sse (HTTP)', () => {
  let gw: GatewayHarness;
  let token: string;
  let instanceId: string;

  const emit = async (events: Array<{ type: string; payload: Record<string, unknown> }>) => {
    const lastId = await gw.db.dataSource.transaction((manager) =>
      new OutboxRepository(gw.db.dataSource).within(manager).insert(
        instanceId,
        events.map((event) => ({ eventType: event.type, payload: event.payload })),
      ),
    );
    gw.bus.publish(Subjects.outbox(instanceId), { instanceId, lastId });
    return lastId!;
  };

  beforeAll(async () => {
    gw = await startGateway({ env: { SSE_HEARTBEAT_MS: '200', PUBLIC_BASE_URL: 'https://gw.example' } });
    ({ token, id: instanceId } = await gw.createInstance('sse'));
  });
  afterAll(() => gw.close());

  it('should stream new events with event names, ids and the envelope', async () => {
    const stream = await openStream(`${gw.baseUrl}/sse`, { token });
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/text\/event-stream/);
    await waitFor(() => stream.frames.length > 0);
    await emit([{ type: 'connection', payload: { EventType: 'connection', instanceName: 'sse' } }]);
    await waitFor(() => stream.dataFrames().length === 1);
    await stream.close();
    const [frame] = stream.dataFrames();
    expect(frame.event).toBe('connection');
    expect(frame.id).toMatch(/^\d+$/);
    expect(frame.data).toEqual({ BaseUrl: 'https://gw.example', EventType: 'connection', instanceName: 'sse' });
  });

  it('should take the token as a query parameter and filter by events and excludeMessages', async () => {
    const stream = await openStream(`${gw.baseUrl}/sse?token=${token}&events=messages&events=presence&excludeMessages=fromMeYes`, {});
    await waitFor(() => stream.frames.length > 0);
    await emit([
      { type: 'connection', payload: { EventType: 'connection' } },
      { type: 'messages', payload: { EventType: 'messages', message: { fromMe: true, n: 1 } } },
      { type: 'messages', payload: { EventType: 'messages', message: { fromMe: false, n: 2 } } },
      { type: 'presence', payload: { EventType: 'presence', n: 3 } },
    ]);
    await waitFor(() => stream.dataFrames().length === 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await stream.close();
    expect(stream.dataFrames().map((frame) => frame.event)).toEqual(['messages', 'presence']);
  });

  it('should resume after Last-Event-ID', async () => {
    const first = await emit([{ type: 'presence', payload: { n: 'a' } }]);
    await emit([
      { type: 'presence', payload: { n: 'b' } },
      { type: 'presence', payload: { n: 'c' } },
    ]);
    const stream = await openStream(`${gw.baseUrl}/sse`, { token, 'last-event-id': first });
    await waitFor(() => stream.dataFrames().length >= 2);
    await stream.close();
    expect(stream.dataFrames().map((frame) => (frame.data as { n: string }).n)).toEqual(['b', 'c']);
  });

  it('should not lose an event whose transaction commits after one with a larger id was streamed', async () => {
    const stream = await openStream(`${gw.baseUrl}/sse`, { token });
    await waitFor(() => stream.frames.length > 0);
    const early = gw.db.dataSource.createQueryRunner();
    const later = gw.db.dataSource.createQueryRunner();
    try {
      await early.connect();
      await later.connect();
      await early.startTransaction();
      const earlyId = await new OutboxRepository(gw.db.dataSource)
        .within(early.manager)
        .insert(instanceId, [{ eventType: 'presence', payload: { n: 'early' } }]);
      await later.startTransaction();
      const laterId = await new OutboxRepository(gw.db.dataSource)
        .within(later.manager)
        .insert(instanceId, [{ eventType: 'presence', payload: { n: 'later' } }]);
      await later.commitTransaction();
      expect(BigInt(earlyId!)).toBeLessThan(BigInt(laterId!));
      gw.bus.publish(Subjects.outbox(instanceId), { instanceId, lastId: laterId });
      // Let the stream read with 'later' committed and 'early' still open (the announcement, two heartbeats).
      const heartbeats = () => stream.frames.filter((frame) => frame.comment?.startsWith('heartbeat')).length;
      const seen = heartbeats();
      await waitFor(() => heartbeats() >= seen + 2);
      await early.commitTransaction();
      gw.bus.publish(Subjects.outbox(instanceId), { instanceId, lastId: earlyId });
      await waitFor(() => stream.dataFrames().length >= 2, 20_000);
      expect(stream.dataFrames().map((frame) => (frame.data as { n: string }).n)).toEqual(['early', 'later']);
      expect(stream.dataFrames().map((frame) => frame.id)).toEqual([earlyId, laterId]);
    } finally {
      if (early.isTransactionActive) await early.rollbackTransaction();
      await early.release();
      await later.release();
      await stream.close();
    }
  });

  it('should send heartbeats', async () => {
    const stream = await openStream(`${gw.baseUrl}/sse`, { token });
    await waitFor(() => stream.frames.filter((frame) => frame.comment?.startsWith('heartbeat')).length >= 2, 3000);
    await stream.close();
  });

  it('should answer HEAD at once with the headers only: 200 event-stream for a valid token, 401 for a bad one', async () => {
    const head = await fetch(`${gw.baseUrl}/sse`, { method: 'HEAD', headers: { token }, signal: AbortSignal.timeout(3_000) });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await head.text()).toBe('');
    const bad = await fetch(`${gw.baseUrl}/sse?token=nope`, { method: 'HEAD', signal: AbortSignal.timeout(3_000) });
    expect(bad.status).toBe(401);
  });

  it('should refuse a bad token, unknown events and a bad Last-Event-ID', async () => {
    expect((await gw.call('GET', '/sse?token=nope')).status).toBe(401);
    expect((await gw.call('GET', '/sse?events=nope', { token })).status).toBe(400);
    expect((await gw.call('GET', '/sse', { token, headers: { 'last-event-id': 'x' } })).status).toBe(400);
  });

  it('should never show another instance its events', async () => {
    const other = await gw.createInstance('other');
    const stream = await openStream(`${gw.baseUrl}/sse`, { token: other.token });
    await waitFor(() => stream.frames.length > 0);
    await emit([{ type: 'presence', payload: { secret: true } }]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await stream.close();
    expect(stream.dataFrames()).toHaveLength(0);
  });
});

describe('GET /sse with a slow client', () => {
  let gw: GatewayHarness;
  let token: string;
  let instanceId: string;
  const BLOB = 'x'.repeat(256 * 1024);
  const EVENTS = 120; // 30 MB: more than the kernel's socket buffers on both sides can hold

  /** 30 MB of events in a few transactions; returns the id written just before them. */
  const burst = async () => {
    const before = await gw.db.dataSource.transaction((manager) =>
      new OutboxRepository(gw.db.dataSource).within(manager).insert(instanceId, [{ eventType: 'presence', payload: { n: -1 } }]),
    );
    for (let start = 0; start < EVENTS; start += 20) {
      const lastId = await gw.db.dataSource.transaction((manager) =>
        new OutboxRepository(gw.db.dataSource).within(manager).insert(
          instanceId,
          Array.from({ length: 20 }, (_, k) => ({ eventType: 'presence', payload: { n: start + k, blob: BLOB } })),
        ),
      );
      gw.bus.publish(Subjects.outbox(instanceId), { instanceId, lastId });
    }
    return before!;
  };

  beforeAll(async () => {
    gw = await startGateway({ env: { SSE_HEARTBEAT_MS: '200', SSE_SLOW_CLIENT_MS: '500' } });
    ({ token, id: instanceId } = await gw.createInstance('slow'));
  });
  afterAll(() => gw.close());

  it('should pace a backlog far above the buffer limit to a client that reads, and drop none of it', async () => {
    const before = await burst();
    const stream = await openStream(`${gw.baseUrl}/sse`, { token, 'last-event-id': before });
    try {
      await waitFor(() => stream.dataFrames().length >= EVENTS, 60_000);
      expect(stream.dataFrames().map((frame) => (frame.data as { n: number }).n)).toEqual(Array.from({ length: EVENTS }, (_, n) => n));
    } finally {
      await stream.close();
    }
  });

  it('should drop a client that stops reading, instead of buffering for it', async () => {
    const server = gw.app.getHttpServer() as import('node:http').Server;
    const accepted: Socket[] = [];
    const onConnection = (socket: Socket) => accepted.push(socket);
    server.on('connection', onConnection);
    const port = (server.address() as { port: number }).port;
    const client = connect(port, '127.0.0.1');
    let received = 0;
    let ended = false;
    client.on('end', () => (ended = true));
    client.on('close', () => (ended = true));
    client.on('error', () => (ended = true));
    try {
      await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      client.write(`GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\ntoken: ${token}\r\n\r\n`);
      // Read up to the opening comment, then stop reading: the kernel buffers fill, then the server's.
      await new Promise<void>((resolve) => {
        let head = '';
        const onData = (chunk: Buffer) => {
          received += chunk.length;
          head += chunk.toString('latin1');
          if (head.includes(': connected')) {
            client.pause();
            client.off('data', onData);
            resolve();
          }
        };
        client.on('data', onData);
      });
      const serverSide = () => accepted.find((socket) => socket.remotePort === client.localPort);
      await waitFor(() => serverSide() !== undefined);
      await burst();
      // Dropped: the server destroys its socket once the client left more than the high-water mark unread.
      await waitFor(() => serverSide()!.destroyed, 60_000);
      // What was already in the kernel buffers still arrives, then the stream ends short of the burst.
      client.on('data', (chunk: Buffer) => (received += chunk.length));
      client.resume();
      await waitFor(() => ended, 30_000);
      expect(received).toBeLessThan(EVENTS * BLOB.length);
    } finally {
      server.off('connection', onConnection);
      client.destroy();
    }
  });
});
