import { InboundBackpressure, RESUME_SPACING_MS, type Readable } from './inbound-backpressure';

class FakeSocket implements Readable {
  paused = false;
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
}

describe(InboundBackpressure.name, () => {
  let clock = 0;
  const now = () => clock;
  afterEach(() => jest.useRealTimers());

  it('should count a history chunk by the items it holds: one chunk of a thousand pauses its socket, as a thousand messages do', () => {
    const sut = new InboundBackpressure({ socketMax: 1_000, workerMax: 20_000 }, undefined, now);
    const socket = new FakeSocket();
    const backlog = sut.register(socket);

    backlog.added(999);
    expect(socket.paused).toBe(false);
    backlog.added(1);
    expect(socket.paused).toBe(true);
    expect(sut.depth).toBe(1_000);
    expect(sut.room).toBe(19_000);

    // Read again once its own queue is at a quarter.
    backlog.removed(999);
    expect(socket.paused).toBe(false);
    expect(sut.depth).toBe(1);
  });

  it("should make the decrypts wait from half the socket's bound, below the pause, and let them go as the queue drains or the socket goes (ADR 0048)", async () => {
    const sut = new InboundBackpressure({ socketMax: 10, workerMax: 20_000 }, undefined, now);
    const socket = new FakeSocket();
    const backlog = sut.register(socket);
    backlog.added(4);
    expect(backlog.whenRoom()).toBeUndefined();
    backlog.added(1);
    const waiting = backlog.whenRoom();
    expect(waiting).toBeInstanceOf(Promise);
    // Below the socket's own bound: its reading goes on.
    expect(socket.paused).toBe(false);
    let roomy = false;
    void waiting?.then(() => (roomy = true));
    backlog.removed(1);
    await Promise.resolve();
    expect(roomy).toBe(true);

    backlog.added(1);
    const closing = backlog.whenRoom();
    backlog.close();
    await expect(closing).resolves.toBeUndefined();
    expect(backlog.whenRoom()).toBeUndefined();
  });

  it('should read paused sockets again a few at a time, oldest first, spaced apart, and only while the worker stays low', () => {
    jest.useFakeTimers();
    // A batch is a quarter of the worker's bound at a socket's bound each: 4,000 / 4 / 1,000 = one socket.
    const sut = new InboundBackpressure({ socketMax: 1_000, workerMax: 4_000 }, undefined, now);
    const sockets = Array.from({ length: 6 }, () => new FakeSocket());
    const backlogs = sockets.map((socket) => sut.register(socket));
    // The first four each bring a chunk of 1,000: the worker is full, and each of them is paused.
    for (const backlog of backlogs.slice(0, 4)) backlog.added(1_000);
    expect(sut.room).toBe(0);
    // The last two find the worker full before handing Baileys a frame (SocketReader): paused too.
    backlogs[4].waitForRoom();
    backlogs[5].waitForRoom();
    expect(sockets.map((socket) => socket.paused)).toEqual([true, true, true, true, true, true]);
    expect(sut.pausedSockets).toBe(6);

    // Three chunks stored: the worker is at a quarter. One socket is read again: the oldest one below its own mark.
    for (const backlog of backlogs.slice(0, 3)) backlog.removed(1_000);
    expect(sockets.map((socket) => socket.paused)).toEqual([false, true, true, true, true, true]);

    // Within the spacing nothing more is read again, however much drains...
    clock += RESUME_SPACING_MS / 2;
    backlogs[3].removed(1_000);
    expect(sut.depth).toBe(0);
    expect(sut.pausedSockets).toBe(5);
    // ...until the spacing is over, when a timer reads the next one again (nothing else may come to do it).
    clock += RESUME_SPACING_MS;
    jest.advanceTimersByTime(RESUME_SPACING_MS);
    expect(sockets.map((socket) => socket.paused)).toEqual([false, false, true, true, true, true]);

    // The two read again bring 1,200 items between them, above the worker's low-water mark (1,000): nobody else is read again.
    backlogs[0].added(600);
    backlogs[1].added(600);
    clock += RESUME_SPACING_MS;
    jest.advanceTimersByTime(RESUME_SPACING_MS * 5);
    backlogs[0].removed(100);
    expect(sut.pausedSockets).toBe(4);
    // Stored down to the mark: the next oldest (socket 2) is read again.
    backlogs[0].removed(100);
    expect(sockets.map((socket) => socket.paused)).toEqual([false, false, false, true, true, true]);
  });

  it('should read every paused socket again in batches when the bound allows several at once', () => {
    const sut = new InboundBackpressure({ socketMax: 10, workerMax: 100 }, undefined, now);
    const sockets = Array.from({ length: 12 }, () => new FakeSocket());
    const backlogs = sockets.map((socket) => sut.register(socket));
    for (const backlog of backlogs.slice(0, 10)) backlog.added(10);
    for (const backlog of backlogs.slice(10)) backlog.waitForRoom();
    expect(sut.pausedSockets).toBe(12);
    // A batch: 100 / 4 / 10 = 2 sockets.
    for (const backlog of backlogs.slice(0, 8)) backlog.removed(10);
    expect(sut.pausedSockets).toBe(10);
    clock += RESUME_SPACING_MS;
    backlogs[8].removed(10);
    expect(sut.pausedSockets).toBe(8);
    // A socket whose own queue is still deep (socket 9: 10 items) is passed over for the ones below theirs.
    expect(sockets[9].paused).toBe(true);
  });

  it('should read every paused socket again, batch after batch, even when the ones read again bring nothing (no item left to store)', () => {
    jest.useFakeTimers();
    const sut = new InboundBackpressure({ socketMax: 1_000, workerMax: 4_000 }, undefined, () => Date.now());
    const sockets = Array.from({ length: 7 }, () => new FakeSocket());
    const backlogs = sockets.map((socket) => sut.register(socket));
    for (const backlog of backlogs.slice(0, 4)) backlog.added(1_000);
    // Idle sockets that found the worker full holding a pong, say: paused with nothing queued.
    for (const backlog of backlogs.slice(4)) backlog.waitForRoom();
    for (const backlog of backlogs.slice(0, 4)) backlog.removed(1_000);
    expect(sut.depth).toBe(0);
    expect(sut.pausedSockets).toBe(6);
    // Nothing is stored any more; the timer alone reads the rest again, one batch (one socket) every spacing.
    for (let step = 1; step <= 6; step++) {
      jest.advanceTimersByTime(RESUME_SPACING_MS);
      expect(sut.pausedSockets).toBe(6 - step);
    }
    expect(sockets.every((socket) => !socket.paused)).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  it("should hold to the worker's bound only the sockets that hold a quarter of their own bound or are in their first sync, so a light instance keeps going while another's history fills the worker", () => {
    const sut = new InboundBackpressure({ socketMax: 1_000, workerMax: 2_000 }, undefined, now);
    const historySocket = new FakeSocket();
    const history = sut.register(historySocket, () => true);
    const senderSocket = new FakeSocket();
    const sender = sut.register(senderSocket, () => false);
    const freshSocket = new FakeSocket();
    const fresh = sut.register(freshSocket, () => true);

    // Below the worker's bound every socket has room as far as the worker goes.
    expect(sender.room()).toBe(Infinity);
    expect(fresh.room()).toBe(2_000);
    // A history of 2,500 items fills the worker (and its own socket is past its own bound).
    history.added(2_500);
    expect(historySocket.paused).toBe(true);
    expect(sut.room).toBe(-500);
    // The sender's receipts still go: it holds less than a quarter of its bound and its first sync is over.
    for (let i = 0; i < 249; i++) sender.added(1);
    expect(senderSocket.paused).toBe(false);
    expect(sender.room()).toBe(Infinity);
    // At a quarter of its bound it is held like any heavy socket.
    sender.added(1);
    expect(senderSocket.paused).toBe(true);
    // A fresh device, holding nothing yet, gets no room: its next frame may be a history.
    expect(fresh.room()).toBeLessThanOrEqual(0);
    fresh.added(1);
    expect(freshSocket.paused).toBe(true);
  });

  it('should neither pause a closed socket nor count it among the paused', () => {
    const sut = new InboundBackpressure({ socketMax: 2, workerMax: 2 }, undefined, now);
    const socket = new FakeSocket();
    const backlog = sut.register(socket);
    backlog.added(2);
    backlog.close();
    expect(sut.pausedSockets).toBe(0);
    // What its reader does while it is closed (a resume that finds the worker still full) pauses nothing.
    backlog.waitForRoom();
    backlog.added(1);
    expect(sut.pausedSockets).toBe(0);
    backlog.removed(3);
    expect(sut.depth).toBe(0);
  });

  it('should not read a closed socket again, nor count it among the paused', () => {
    const sut = new InboundBackpressure({ socketMax: 2, workerMax: 100 }, undefined, now);
    const socket = new FakeSocket();
    const backlog = sut.register(socket);
    backlog.added(2);
    expect(sut.pausedSockets).toBe(1);
    backlog.close();
    expect(sut.pausedSockets).toBe(0);
    backlog.removed(2);
    expect(sut.depth).toBe(0);
  });
});
