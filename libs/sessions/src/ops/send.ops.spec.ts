import { ErrorCode, RpcError, type SendRequest } from '@gw/contracts';
import { EventEmitter } from 'node:events';
import type { Session } from '../session/session';
import { sendOps } from './send.ops';

/** A socket as the send path uses it: relays, acks on `ws`, close events; `relay` decides each relay's fate. */
function fakeSocket(relay: (socket: ReturnType<typeof fakeSocket>) => Promise<void>) {
  const ws = Object.assign(new EventEmitter(), { isClosed: false, isClosing: false });
  const socket = {
    ws,
    ev: new EventEmitter(),
    user: { id: '5511000000000:1@s.whatsapp.net' },
    relayed: 0,
    relayMessage: async () => {
      socket.relayed++;
      await relay(socket);
    },
    upsertMessage: async () => undefined,
    sendPresenceUpdate: async () => undefined,
  };
  return socket;
}

/** A socket whose relay is acked by the server a moment later. */
const acking = () =>
  fakeSocket(async (socket) => {
    setImmediate(() => socket.ws.emit('CB:ack,class:message', { tag: 'ack', attrs: { class: 'message', id: 'M1' } }));
  });

const connectionClosed = () => Object.assign(new Error('Connection Closed'), { isBoom: true, output: { statusCode: 428 } });

function harness(sockets: Array<ReturnType<typeof fakeSocket>>, logger: { info: (...args: unknown[]) => void } = { info: () => undefined }) {
  const calls: string[] = [];
  const row = { messageId: 'M1', status: 'Pending', error: '' };
  const ledger = {
    reserve: async () => (calls.push('reserve'), { alreadyRelayed: null }),
    unrelay: async () => void calls.push('unrelay'),
    keepCopy: async () => void calls.push('keepCopy'),
    rawMessage: async () => ({ row, raw: null }),
    result: async () => (calls.push('result'), row),
    relayedBefore: async () => null,
  };
  const ops = sendOps({
    ledger: ledger as never,
    builder: { build: async () => ({ kind: 'proto', message: { conversation: 'oi' } }) } as never,
    chats: { findByJid: async () => null } as never,
    logger: { info: logger.info, warn: () => undefined } as never,
    config: { sendAckTimeoutMs: 200, sendReconnectWaitMs: 50 },
  });
  let next = 1;
  const session = {
    instanceId: 'i1',
    lease: { instanceId: 'i1' },
    instance: { name: 'i1', owner: '' },
    openSocket: () => sockets[0],
    openSocketOnArrival: async () => sockets[0],
    whenOpen: async () => sockets[next++] ?? null,
  } as unknown as Session;
  const request: SendRequest = {
    instanceId: 'i1',
    recordId: 'r1',
    messageId: 'M1',
    chatJid: '5521999990000@s.whatsapp.net',
    content: { kind: 'text', text: 'oi', linkPreview: null },
    queued: true,
    record: { sendFunction: 'SendTextMessage', sendPayload: {}, trackSource: '', trackId: '', sendFolderId: '' },
  } as SendRequest;
  return { ops, session, request, calls, ledger: ledger as { result: () => Promise<unknown> } };
}

describe('send op: a queued send whose connection goes after the message went out', () => {
  it('keeps it relayed and Pending with its copy (never un-marked) when the relay on the next socket fails too', async () => {
    // Socket 1: the message goes out, then the socket closes before the server's ack.
    const first = fakeSocket(async (socket) => {
      setImmediate(() => socket.ws.emit('close'));
    });
    // Socket 2: closed under the relay again; no third socket in time.
    const second = fakeSocket(async () => {
      throw connectionClosed();
    });
    const { ops, session, request, calls } = harness([first, second]);

    const record = await ops.send(session, request);

    expect([first.relayed, second.relayed]).toEqual([1, 1]);
    expect(record).toMatchObject({ status: 'Pending' });
    // Un-marked relayed, a queue entry the queue completed meanwhile left it Pending with no mark, swept by no one.
    expect(calls).not.toContain('unrelay');
    expect(calls).toContain('keepCopy');
  });

  it('hands a send that never went out back to the queue (un-marked relayed, NotConnected)', async () => {
    const only = fakeSocket(async () => {
      throw connectionClosed();
    });
    const { ops, session, request, calls } = harness([only]);

    await expect(ops.send(session, request)).rejects.toMatchObject({ code: ErrorCode.NotConnected });
    expect(calls).toContain('unrelay');
    expect(calls).not.toContain('keepCopy');
  });
});

describe('send op: a retry of a send that went out, reaching an instance with no socket', () => {
  it('answers the stored row (it may have arrived) instead of NotConnected (which reads "not sent")', async () => {
    const { ops, session, request, ledger } = harness([]);
    (session as unknown as { openSocketOnArrival: () => Promise<never> }).openSocketOnArrival = async () => {
      throw new RpcError(ErrorCode.NotConnected, 'instance is not connected');
    };
    (ledger as unknown as { relayedBefore: () => Promise<unknown> }).relayedBefore = async () => ({ messageId: 'M1', status: 'Pending', error: '' });
    await expect(ops.send(session, { ...request, queued: false })).resolves.toMatchObject({ status: 'Pending' });
  });

  it('still answers NotConnected for a send that never went out', async () => {
    const { ops, session, request } = harness([]);
    const notConnected = new RpcError(ErrorCode.NotConnected, 'instance is not connected');
    (session as unknown as { openSocketOnArrival: () => Promise<never> }).openSocketOnArrival = async () => {
      throw notConnected;
    };
    await expect(ops.send(session, { ...request, queued: false })).rejects.toBe(notConnected);
  });
});

describe('send op: a sync send past its caller deadline (notAfter)', () => {
  it('begins nothing — no reserve, no relay — and answers Timeout, so the caller may say "not sent"', async () => {
    const socket = fakeSocket(async () => undefined);
    const { ops, session, request, calls } = harness([socket]);

    await expect(ops.send(session, { ...request, queued: false, notAfter: Date.now() - 1 })).rejects.toMatchObject({ code: ErrorCode.Timeout });

    expect(calls).toEqual([]);
    expect(socket.relayed).toBe(0);
  });

  it('still begins a send whose deadline has not passed', async () => {
    const socket = fakeSocket(async () => undefined);
    const { ops, session, request, calls } = harness([socket]);

    await ops.send(session, { ...request, queued: false, notAfter: Date.now() + 60_000 }).catch(() => undefined);

    expect(calls[0]).toBe('reserve');
    expect(socket.relayed).toBe(1);
  });
});

describe('send op: acked by WhatsApp while the database does not answer', () => {
  it('waits for the database to write Sent, and answers Sent (never an error for a message that went out)', async () => {
    const socket = acking();
    const { ops, session, request, calls, ledger } = harness([socket]);
    let failures = 2;
    ledger.result = async () => {
      calls.push('result');
      if (failures-- > 0) throw Object.assign(new Error('Connection terminated unexpectedly'), {});
      return { messageId: 'M1', status: 'Sent', error: '' };
    };
    (session as unknown as { currentPhase: string }).currentPhase = 'open';

    const record = await ops.send(session, { ...request, queued: false });

    expect(record).toMatchObject({ status: 'Sent' });
    expect(calls.filter((call) => call === 'result')).toHaveLength(3);
  });

  it('fails at once on any other error', async () => {
    const socket = acking();
    const { ops, session, request, calls, ledger } = harness([socket]);
    ledger.result = async () => {
      calls.push('result');
      throw new Error('duplicate key value violates unique constraint');
    };
    (session as unknown as { currentPhase: string }).currentPhase = 'open';

    await expect(ops.send(session, { ...request, queued: false })).rejects.toThrow(/duplicate key/);
    expect(calls.filter((call) => call === 'result')).toHaveLength(1);
  });
});

describe('send op: a slow send', () => {
  it('is logged with where its time went (an instance arriving from another worker: its socket)', async () => {
    const socket = acking();
    const logged: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const { ops, session, request, ledger } = harness([socket], {
      info: (fields, message) => logged.push({ fields: fields as Record<string, unknown>, message: message as string }),
    });
    ledger.result = async () => ({ messageId: 'M1', status: 'Sent', error: '' });
    // The heir's socket opens 1.05 s after the send reached it.
    (session as unknown as { openSocketOnArrival: () => Promise<unknown> }).openSocketOnArrival = () =>
      new Promise((resolve) => setTimeout(() => resolve(socket), 1_050));

    await ops.send(session, { ...request, queued: false });

    const slow = logged.find((entry) => entry.message === 'a slow send');
    expect(slow?.fields).toMatchObject({ instanceId: 'i1', messageId: 'M1', outcome: 'sent' });
    const fields = slow?.fields as Record<string, number>;
    expect(fields.socketMs).toBeGreaterThanOrEqual(1_000);
    expect(fields.ms).toBeGreaterThanOrEqual(fields.socketMs);
    for (const phase of ['reserveMs', 'relayMs', 'ackMs', 'restMs']) expect(typeof fields[phase]).toBe('number');
  });

  it('is not logged under a second', async () => {
    const socket = acking();
    const messages: string[] = [];
    const { ops, session, request } = harness([socket], { info: (_fields, message) => messages.push(message as string) });
    await ops.send(session, { ...request, queued: false });
    expect(messages).not.toContain('a slow send');
  });
});

describe('send op: a send its worker cut off before its copy (ADR 0070)', () => {
  const cutOffRow = { messageId: 'M1', status: 'Pending', error: '', raw: null };

  it('is taken over by one of two requests for it at once and relayed again; the other answers the row', async () => {
    const socket = acking();
    const { ops, session, request, calls, ledger } = harness([socket]);
    const stub = ledger as unknown as Record<string, unknown>;
    stub.reserve = async () => (calls.push('reserve'), { alreadyRelayed: cutOffRow });
    stub.reclaimCutOff = async () => (calls.push('reclaim'), await new Promise((resolve) => setTimeout(resolve, 20)), true);
    stub.result = async () => (calls.push('result'), { ...cutOffRow, status: 'Sent' });

    const [one, two] = await Promise.all([ops.send(session, { ...request, queued: false }), ops.send(session, request)]);

    expect(socket.relayed).toBe(1);
    expect(calls.filter((call) => call === 'reclaim')).toHaveLength(1);
    expect([one.status, two.status].sort()).toEqual(['Pending', 'Sent']);
  });

  it('is left to a send of this worker still relaying it (its ack not come yet), which answers with its result', async () => {
    let ack!: () => void;
    const socket = fakeSocket(async (s) => {
      ack = () => s.ws.emit('CB:ack,class:message', { tag: 'ack', attrs: { class: 'message', id: 'M1' } });
    });
    const { ops, session, request, calls, ledger } = harness([socket]);
    const stub = ledger as unknown as Record<string, unknown>;
    stub.reclaimCutOff = async () => (calls.push('reclaim'), true);
    stub.result = async () => (calls.push('result'), { ...cutOffRow, status: 'Sent' });

    // The first send reserves and relays; a retry of it comes while its ack is awaited and meets its row relayed.
    const first = ops.send(session, request);
    while (socket.relayed === 0) await new Promise((resolve) => setImmediate(resolve));
    stub.reserve = async () => (calls.push('reserve'), { alreadyRelayed: cutOffRow });
    const retry = await ops.send(session, request);
    ack();

    expect(retry).toMatchObject({ status: 'Pending' });
    expect(await first).toMatchObject({ status: 'Sent' });
    expect(socket.relayed).toBe(1);
    expect(calls).not.toContain('reclaim');
  });
});
