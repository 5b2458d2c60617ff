import { EventEmitter } from 'node:events';
import pino from 'pino';
import type { SocketContext } from '../session/socket-observer';
import type { WAMessage, WASocket } from '../baileys';
import { HeldAcks, rememberHeldAcks } from '../socket/held-acks';
import { READING_HELD_MAX_MS, SocketReader } from './socket-reader';

/** A websocket as Baileys' client is to the reader: an emitter over a TCP socket, and the frames Baileys was handed. */
function fakeWebSocket(): {
  tcp: { pause: jest.Mock; resume: jest.Mock };
  ws: EventEmitter & { readingHeld?: () => boolean };
  handed: unknown[];
  socket: SocketContext['socket'];
} {
  const tcp = { pause: jest.fn(), resume: jest.fn() };
  const ws = Object.assign(new EventEmitter(), { socket: tcp }) as EventEmitter & { socket: typeof tcp; readingHeld?: () => boolean };
  const handed: unknown[] = [];
  ws.on('message', (frame: unknown) => handed.push(frame));
  return { tcp, ws, handed, socket: { ws } as unknown as SocketContext['socket'] };
}

describe(SocketReader.name, () => {
  it('should stop reading the TCP socket as soon as it is paused, and read it again once resumed', () => {
    const { tcp, ws, handed, socket } = fakeWebSocket();
    const sut = new SocketReader(socket, 1_000, () => 0, pino({ level: 'silent' }));

    ws.emit('message', 'f1');
    expect(handed).toEqual(['f1']);
    sut.pause();
    // A socket paused by the worker's bound holds only what the websocket had read, not up to its own bound.
    expect(tcp.pause).toHaveBeenCalledTimes(1);
    for (const frame of ['f2', 'f3']) ws.emit('message', frame);
    expect(handed).toEqual(['f1']);
    expect(sut.holding).toBe(2);

    sut.resume();
    expect(handed).toEqual(['f1', 'f2', 'f3']);
    expect(tcp.resume).toHaveBeenCalledTimes(1);
    sut.close();
  });

  it("should hand Baileys no more stanzas than the socket's bound while it is handling them, and count them no longer once it finished none for a second (ADR 0048)", () => {
    jest.useFakeTimers();
    try {
      const { ws, handed, socket } = fakeWebSocket();
      // Baileys' own queue (our patch): stanzas handed to its handlers and not finished, and those finished.
      const stanzas = { inFlight: 0, done: 0 };
      const counted = Object.assign(socket, { stanzas: () => ({ ...stanzas }) });
      ws.on('message', () => stanzas.inFlight++);
      const sut = new SocketReader(counted, 4, () => 0, pino({ level: 'silent' }));
      for (let frame = 1; frame <= 6; frame++) ws.emit('message', `f${frame}`);
      expect(handed).toEqual(['f1', 'f2', 'f3', 'f4']);
      expect(sut.holding).toBe(2);
      // Two finished: two more go.
      stanzas.inFlight -= 2;
      stanzas.done += 2;
      jest.advanceTimersByTime(10);
      expect(handed).toEqual(['f1', 'f2', 'f3', 'f4', 'f5', 'f6']);
      for (let frame = 7; frame <= 8; frame++) ws.emit('message', `f${frame}`);
      jest.advanceTimersByTime(500);
      expect(sut.holding).toBe(2);
      // Nothing finished for a second: its handlers may wait for a frame held here (a query's answer).
      jest.advanceTimersByTime(1_000);
      expect(handed).toContain('f8');
      sut.close();
    } finally {
      jest.useRealTimers();
    }
  });

  it("should say it is stuck while it holds frames, is paused or held, or Baileys waits for the queue's room", () => {
    const { ws, socket } = fakeWebSocket();
    const stanzas = { inFlight: 0, done: 0 };
    const counted = Object.assign(socket, { stanzas: () => ({ ...stanzas }) });
    ws.on('message', () => stanzas.inFlight++);
    const sut = new SocketReader(counted, 4, () => 0, pino({ level: 'silent' }));
    expect(sut.stuck).toBe(false);
    sut.pause();
    expect(sut.stuck).toBe(true);
    sut.resume();
    expect(sut.stuck).toBe(false);
    // Baileys holds the socket's bound: the next frame is held here.
    for (let frame = 1; frame <= 5; frame++) ws.emit('message', `f${frame}`);
    expect(sut.holding).toBe(1);
    expect(sut.stuck).toBe(true);
    sut.close();

    // Baileys' message handler waiting for the queue's room (ADR 0048), nothing held.
    const other = fakeWebSocket();
    const acks = new HeldAcks(pino({ level: 'silent' }));
    acks.setGate(() => new Promise<void>(() => undefined));
    rememberHeldAcks(other.socket as unknown as WASocket, acks);
    const waiting = new SocketReader(other.socket, 4, () => 2, pino({ level: 'silent' }));
    expect(waiting.stuck).toBe(false);
    void acks.hold({ key: { remoteJid: '1@s.whatsapp.net', id: 'M1' } } as WAMessage, async () => undefined);
    expect(waiting.stuck).toBe(true);
    waiting.close();
  });

  it('should hand Baileys nothing while the database is out of reach (held), whatever the backpressure says, until every hold is given back', () => {
    const { tcp, ws, handed, socket } = fakeWebSocket();
    const sut = new SocketReader(socket, 1_000, () => 0, pino({ level: 'silent' }));

    sut.hold(); // the store's write met no database
    sut.hold(); // a lookup before another write did too
    expect(tcp.pause).toHaveBeenCalledTimes(1);
    ws.emit('message', 'f1');
    // The backpressure's pause and resume do not read a held socket again.
    sut.pause();
    sut.resume();
    expect(handed).toEqual([]);
    sut.unhold();
    expect(handed).toEqual([]);
    sut.unhold();
    expect(handed).toEqual(['f1']);
    expect(tcp.resume).toHaveBeenCalledTimes(1);
    // More unholds than holds change nothing.
    sut.unhold();
    ws.emit('message', 'f2');
    expect(handed).toEqual(['f1', 'f2']);
    sut.close();
  });

  it('should hand Baileys nothing while the worker is full, ask to be paused instead of trying again, and tell the keep-alive it holds the socket', () => {
    jest.useFakeTimers();
    try {
      const { tcp, ws, handed, socket } = fakeWebSocket();
      let room = 0;
      const full = jest.fn();
      const sut: SocketReader = new SocketReader(socket, 1_000, () => 0, pino({ level: 'silent' }), {
        room: () => room,
        full: () => {
          full();
          sut.pause(); // what InboundBackpressure does for a socket that waits for room
        },
      });

      expect(ws.readingHeld?.()).toBe(false);
      // The handshake and the login go through whatever the worker holds: they bring nothing to store.
      ws.emit('message', 'server hello');
      expect(handed).toEqual(['server hello']);
      expect(full).not.toHaveBeenCalled();
      ws.emit('CB:success', {});
      const timers = jest.getTimerCount();
      ws.emit('message', 'f1');
      // Not handed: held, and the backpressure asked to pause this socket (no timer polling the worker's room).
      expect(handed).toEqual(['server hello']);
      expect(full).toHaveBeenCalledTimes(1);
      expect(tcp.pause).toHaveBeenCalledTimes(1);
      expect(jest.getTimerCount()).toBe(timers);
      expect(ws.readingHeld?.()).toBe(true);

      // Resumed once the worker has room: what was held goes to Baileys, and the keep-alive watches again.
      room = 10;
      jest.advanceTimersByTime(10);
      sut.resume();
      expect(handed).toEqual(['server hello', 'f1']);
      expect(ws.readingHeld?.()).toBe(false);
      sut.close();
      expect(ws.readingHeld?.()).toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });

  it('should tell the keep-alive the silence is ours only for READING_HELD_MAX_MS without a break, then let its check apply', () => {
    jest.useFakeTimers();
    try {
      const { ws, socket } = fakeWebSocket();
      const sut = new SocketReader(socket, 1_000, () => 0, pino({ level: 'silent' }));
      sut.hold(); // a database out of reach
      expect(ws.readingHeld?.()).toBe(true);
      jest.advanceTimersByTime(READING_HELD_MAX_MS - 30_000);
      expect(ws.readingHeld?.()).toBe(true);
      jest.advanceTimersByTime(30_000);
      expect(ws.readingHeld?.()).toBe(false);
      // Read again, then held again: a new hold starts a new window.
      sut.unhold();
      expect(ws.readingHeld?.()).toBe(false);
      sut.hold();
      expect(ws.readingHeld?.()).toBe(true);
      sut.close();
    } finally {
      jest.useRealTimers();
    }
  });
});
