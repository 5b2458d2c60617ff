import { InProcessBus, type Bus, type BusHandler, type BusSubscription } from '@gw/bus';
import { ErrorCode, Subjects } from '@gw/contracts';
import type { Logger } from '@gw/platform';
import type { OpRegistry } from '../ops/op-handler';
import type { Session } from '../session/session';
import type { SessionManager } from '../session/session-manager';
import { SessionRpcServer } from './session-rpc.server';

const logger = { warn: () => undefined, info: () => undefined, error: () => undefined } as unknown as Logger;
const sendRequest = (n: number) => ({
  messageId: `M${n}`,
  recordId: `r${n}`,
  chatJid: '5521999990000@s.whatsapp.net',
  content: { kind: 'text', text: `oi ${n}`, linkPreview: null },
  record: { sendFunction: 'SendTextMessage', sendPayload: {}, trackSource: '', trackId: '', sendFolderId: '' },
});

/** A bus that records how each subscription ended. */
class RecordingBus extends InProcessBus {
  readonly ended: Array<{ subject: string; how: 'unsubscribe' | 'drain' }> = [];

  override subscribe(subject: string, handler: BusHandler, options?: { queue?: string }): BusSubscription {
    const inner = super.subscribe(subject, handler, options);
    return {
      unsubscribe: () => {
        this.ended.push({ subject, how: 'unsubscribe' });
        inner.unsubscribe();
      },
      drain: async () => {
        this.ended.push({ subject, how: 'drain' });
        await inner.drain();
      },
    };
  }
}

/**
 * Issue #39: the worker's side of the bus while it drains. Requests that arrive once it stopped taking
 * work are refused so that the gateway tries again elsewhere (never left unanswered), the ops it took
 * are finished and answered before it lets its bus close, and an instance's subscription ends drained.
 */
describe('SessionRpcServer drain (issue 39)', () => {
  const session = { instanceId: 'i1', status: () => ({ status: 'connected', loggedIn: true, jid: null }) } as unknown as Session;
  let sessions: Map<string, Session>;
  let bus: RecordingBus;
  let release: () => void;
  let sent: string[];
  let server: SessionRpcServer;

  const start = (extra: Partial<SessionManager> = {}) => {
    const manager = {
      setLifecycleListener: () => undefined,
      get: (id: string) => sessions.get(id),
      place: async () => ({ status: 'connecting', loggedIn: false, jid: null }),
      ...extra,
    } as unknown as SessionManager;
    const ops = {
      status: async (target: Session) => target.status(),
      // A send that takes until the test lets it go.
      send: async (_target: Session, request: { messageId: string }) => {
        await new Promise<void>((resolve) => (release = resolve));
        sent.push(request.messageId);
        return { status: 'Sent', messageId: request.messageId };
      },
    } as unknown as OpRegistry;
    server = new SessionRpcServer(bus as Bus, manager, logger, ops);
    server.start();
    server.sessionStarted(session);
  };

  beforeEach(() => {
    sessions = new Map([['i1', session]]);
    bus = new RecordingBus();
    sent = [];
  });

  it('should finish a send in flight, refuse new ones with NoSession and still answer status while draining', async () => {
    start();
    const inFlight = bus.request<{ status: string }>(Subjects.instance('i1', 'send'), sendRequest(1), { timeoutMs: 2_000 });
    await new Promise((resolve) => setImmediate(resolve));
    let drained = false;
    const draining = server.drain(2_000).then(() => (drained = true));
    await expect(bus.request(Subjects.instance('i1', 'send'), sendRequest(2), { timeoutMs: 2_000 })).rejects.toMatchObject({ code: ErrorCode.NoSession });
    await expect(bus.request(Subjects.instance('i1', 'status'), {}, { timeoutMs: 2_000 })).resolves.toMatchObject({ loggedIn: true });
    expect(drained).toBe(false);
    release();
    await expect(inFlight).resolves.toMatchObject({ status: 'Sent' });
    await draining;
    expect(sent).toEqual(['M1']);
  });

  it('should mark a refusal while draining as not run (any op may be tried again on the heir)', async () => {
    start();
    server.beginDrain();
    await expect(bus.request(Subjects.instance('i1', 'presence'), { presence: 'available' }, { timeoutMs: 2_000 })).rejects.toMatchObject({
      code: ErrorCode.NoSession,
      notRun: true,
    });
  });

  it('should refuse the ops of an instance being handed over while the other instances keep running theirs', async () => {
    const other = { ...session, instanceId: 'i2' } as unknown as Session;
    sessions.set('i2', other);
    start();
    server.sessionStarted(other);
    server.beginDrainOf('i1');
    await expect(bus.request(Subjects.instance('i1', 'send'), sendRequest(5), { timeoutMs: 2_000 })).rejects.toMatchObject({
      code: ErrorCode.NoSession,
      notRun: true,
    });
    await expect(bus.request(Subjects.instance('i1', 'status'), {}, { timeoutMs: 2_000 })).resolves.toMatchObject({ loggedIn: true });
    const serving = bus.request<{ status: string }>(Subjects.instance('i2', 'send'), sendRequest(6), { timeoutMs: 2_000 });
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await expect(serving).resolves.toMatchObject({ status: 'Sent' });
    expect(sent).toEqual(['M6']);
  });

  it("should settle each instance on its own: one instance's ops done while another's send still runs", async () => {
    const other = { ...session, instanceId: 'i2' } as unknown as Session;
    sessions.set('i2', other);
    start();
    server.sessionStarted(other);
    const slow = bus.request<{ status: string }>(Subjects.instance('i2', 'send'), sendRequest(4), { timeoutMs: 3_000 });
    await new Promise((resolve) => setImmediate(resolve));
    server.beginDrain();
    const started = Date.now();
    await expect(server.settleInstance('i1', 2_000)).resolves.toBe(true);
    expect(Date.now() - started).toBeLessThan(500);
    await expect(server.settleInstance('i2', 50)).resolves.toBe(false);
    const settled = server.settleInstance('i2', 2_000);
    release();
    await expect(settled).resolves.toBe(true);
    await expect(slow).resolves.toMatchObject({ status: 'Sent' });
  });

  it('should run an op reaching an arriving instance once its socket is open, and answer status at once', async () => {
    let opened: () => void = () => undefined;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const events: string[] = [];
    const arriving = {
      instanceId: 'i3',
      status: () => ({ status: 'connecting', loggedIn: false, jid: null }),
      openSocketOnArrival: async () => {
        await open;
        return {};
      },
    } as unknown as Session;
    sessions.set('i3', arriving);
    const manager = { setLifecycleListener: () => undefined, get: (id: string) => sessions.get(id) } as unknown as SessionManager;
    const ops = {
      status: async (target: Session) => target.status(),
      presence: async () => {
        events.push('presence ran');
        return { ok: true };
      },
    } as unknown as OpRegistry;
    server = new SessionRpcServer(bus as Bus, manager, logger, ops);
    server.start();
    server.sessionStarted(arriving);
    const presence = bus.request(Subjects.instance('i3', 'presence'), { presence: 'available' }, { timeoutMs: 2_000 });
    await expect(bus.request(Subjects.instance('i3', 'status'), {}, { timeoutMs: 2_000 })).resolves.toMatchObject({ loggedIn: false });
    expect(events).toEqual([]);
    opened();
    await expect(presence).resolves.toEqual({ ok: true });
    expect(events).toEqual(['presence ran']);
  });

  it('should refuse a placement once it stopped accepting, as a full worker does (the gateway asks the next one)', async () => {
    start();
    // The queue subscription is drained, not dropped; a placement routed to it meanwhile is refused.
    await server.stopAccepting();
    expect(bus.ended.filter((entry) => entry.subject === Subjects.place).map((entry) => entry.how)).toContain('drain');
    await expect(
      (server as unknown as { place(data: unknown): Promise<unknown> }).place({ instanceId: 'i9', connect: { instanceId: 'i9' } }),
    ).rejects.toMatchObject({ code: ErrorCode.CapacityExhausted });
  });

  it('should say an instance arrived once it answers its ops, so requests waiting for its new holder try again now', async () => {
    const answered: string[] = [];
    bus.subscribe(Subjects.instanceArrived('i1'), async () => {
      // The notice comes after the subscription: a request sent on it reaches this worker.
      answered.push((await bus.request<{ status: string }>(Subjects.instance('i1', 'status'), { instanceId: 'i1' }, { timeoutMs: 1_000 })).status);
      return undefined;
    });
    start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toEqual(['connected']);
  });

  it('should drain (not drop) the subscription of a session that ended', async () => {
    start();
    sessions.delete('i1');
    server.sessionEnded(session);
    expect(bus.ended).toEqual([{ subject: 'instance.i1.>', how: 'drain' }]);
  });

  it('should answer, on close, an op still running past the drain wait before it returns', async () => {
    start();
    const inFlight = bus.request<{ status: string }>(Subjects.instance('i1', 'send'), sendRequest(3), { timeoutMs: 3_000 });
    await new Promise((resolve) => setImmediate(resolve));
    await server.drain(50); // the wait ends with the send still running
    let closed = false;
    const closing = server.close(2_000).then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(false);
    release();
    await closing;
    await expect(inFlight).resolves.toMatchObject({ status: 'Sent' });
    expect(bus.ended.map((entry) => entry.how)).not.toContain('unsubscribe');
  });

  it('should drop every subscription at once when halted (kill -9)', () => {
    start();
    server.stop();
    expect(new Set(bus.ended.map((entry) => entry.how))).toEqual(new Set(['unsubscribe']));
  });
});

describe('SessionRpcServer errors', () => {
  it('should answer an op that met no database as Unavailable (503), not as an internal error (500)', async () => {
    const session = { instanceId: 'i1', openSocketOnArrival: async () => undefined } as unknown as Session;
    const manager = { setLifecycleListener: () => undefined, get: () => session } as unknown as SessionManager;
    let failure: Error = new Error('Connection terminated unexpectedly');
    const ops = {
      status: async () => {
        throw failure;
      },
    } as unknown as OpRegistry;
    const bus = new InProcessBus();
    const server = new SessionRpcServer(bus, manager, logger, ops);
    server.start();
    server.sessionStarted(session);
    await expect(bus.request(Subjects.instance('i1', 'status'), {}, { timeoutMs: 1_000 })).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    failure = new Error('a bug');
    await expect(bus.request(Subjects.instance('i1', 'status'), {}, { timeoutMs: 1_000 })).rejects.toMatchObject({ code: ErrorCode.Internal });
  });
});

describe('SessionRpcServer taken requests (issue 39)', () => {
  it('should tell a holder check that names a send whether this worker took it, and whether it answered it', async () => {
    const session = { instanceId: 'i1', status: () => ({ status: 'connected', loggedIn: true, jid: null }) } as unknown as Session;
    const manager = { setLifecycleListener: () => undefined, get: () => session } as unknown as SessionManager;
    let release: () => void = () => undefined;
    const ops = {
      status: async (target: Session) => target.status(),
      send: async (_target: Session, request: { messageId: string }) => {
        await new Promise<void>((resolve) => (release = resolve));
        return { status: 'Sent', messageId: request.messageId };
      },
    } as unknown as OpRegistry;
    const bus = new InProcessBus();
    const server = new SessionRpcServer(bus, manager, logger, ops);
    server.start();
    server.sessionStarted(session);
    const check = (awaiting?: string) =>
      bus.request<{ received?: boolean }>(Subjects.instance('i1', 'status'), awaiting ? { instanceId: 'i1', awaiting } : { instanceId: 'i1' }, {
        timeoutMs: 1_000,
      });
    const sending = bus.request(Subjects.instance('i1', 'send'), sendRequest(7), { timeoutMs: 2_000 });
    await new Promise((resolve) => setImmediate(resolve));
    // Running: taken, not answered yet.
    await expect(check('send:M7')).resolves.toMatchObject({ loggedIn: true, received: true, answered: false });
    // Never sent here: not taken. A check that names nothing is answered as before.
    await expect(check('send:M8')).resolves.toMatchObject({ received: false });
    expect(await check()).not.toHaveProperty('received');
    release();
    await sending;
    // Answered: still taken, and answered (an asker still waiting lost the answer).
    await expect(check('send:M7')).resolves.toMatchObject({ received: true, answered: true });
  });
});
