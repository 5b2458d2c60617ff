import { EventEmitter } from 'node:events';
import { FencedOutError, type Database, type InstanceRepository, type Lease } from '@gw/persistence';
import type { Bus } from '@gw/bus';
import pino from 'pino';
import type { SocketContext } from '../session/socket-observer';
import type { InboundRepositories } from './inbound/inbound-context';
import { InboundMessageObserver } from './inbound-message.observer';

const fakeSocket = () => {
  const ws = new EventEmitter();
  // A synced device (accountSyncCounter 1): the worker's bound does not apply to it unless it is heavy.
  const authState = { creds: { accountSyncCounter: 1 } };
  return {
    ev: new EventEmitter(),
    ws,
    authState,
    user: { id: '5511999990000@s.whatsapp.net', lid: '1000@lid', name: 'Loja' },
  } as unknown as SocketContext['socket'];
};

const lease = (workerId: string): Lease => ({ instanceId: 'reconnected', workerId, fencingToken: '1' }) as Lease;

describe(InboundMessageObserver.name, () => {
  it("should handle a new socket's events only after the previous socket's queued ones (a reconnect keeps the instance's order)", async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const instances = {
      // The old socket's receipt is still being prepared (who the instance is) when the socket is replaced.
      findById: async () => {
        await blocked;
        return { name: 'Loja', owner: '5511999990000' };
      },
    } as unknown as InstanceRepository;
    const sut = new InboundMessageObserver({
      dataSource: {} as Database,
      bus: {} as Bus,
      logger: pino({ level: 'silent' }),
      repositories: { instances } as unknown as InboundRepositories,
    });
    const writes: string[] = [];
    const before = lease('old');
    const store = {
      write: async (written: Lease) => {
        writes.push(written === before ? 'old socket' : 'new socket');
        return [];
      },
      pending: () => 0,
      // No database outage here: the socket is never held for one (InboundStore.watch).
      watch: () => () => undefined,
    };
    (sut as unknown as { services: { store: unknown } }).services.store = store;

    const old = fakeSocket();
    const detach = sut.attach({ instanceId: 'reconnected', lease: before, socket: old, logger: pino({ level: 'silent' }) });
    // A delivery receipt of a sent group message (acked by Baileys already), then the socket closes.
    old.ev.emit('messages.update', [{ key: { remoteJid: '120363000000000001@g.us', id: 'M1', fromMe: true }, update: { status: 3 } }]);
    detach();

    const next = fakeSocket();
    sut.attach({ instanceId: 'reconnected', lease: lease('new'), socket: next, logger: pino({ level: 'silent' }) });
    // Another device read a chat: written at once (it needs no identity), unless it waits for the old socket's queue.
    next.ev.emit('messages.update', [{ key: { remoteJid: '5511988887777@s.whatsapp.net', id: 'M2', fromMe: false }, update: { status: 4 } }]);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await sut.drain();
    expect(writes).toEqual(['old socket', 'new socket']);
  });
  it('should hand Baileys no more frames once the lease is lost (what it would acknowledge could no longer be stored)', async () => {
    const instances = { findById: async () => ({ name: 'Loja', owner: '5511999990000' }) } as unknown as InstanceRepository;
    const sut = new InboundMessageObserver({
      dataSource: {} as Database,
      bus: {} as Bus,
      logger: pino({ level: 'silent' }),
      repositories: { instances } as unknown as InboundRepositories,
    });
    const store = {
      write: async (written: Lease) => {
        throw new FencedOutError(written.instanceId);
      },
      pending: () => 0,
      // No database outage here: the socket is never held for one (InboundStore.watch).
      watch: () => () => undefined,
    };
    (sut as unknown as { services: { store: unknown } }).services.store = store;
    const socket = fakeSocket();
    const baileys: unknown[] = [];
    socket.ws.on('message', (frame: unknown) => baileys.push(frame));
    sut.attach({ instanceId: 'reconnected', lease: lease('fenced'), socket, logger: pino({ level: 'silent' }) });
    socket.ws.emit('message', 'before');
    expect(baileys).toEqual(['before']);
    // Another device read a chat: its write finds the lease taken over.
    socket.ev.emit('messages.update', [{ key: { remoteJid: '5511988887777@s.whatsapp.net', id: 'M3', fromMe: false }, update: { status: 4 } }]);
    await sut.drain();
    socket.ws.emit('message', 'after');
    expect(baileys).toEqual(['before']);
  });
});
