import { ConnectionPool } from './connection-pool';

interface FakeConnection {
  id: number;
  closed: number;
}

/** The broker connections a sink transport keeps: shared per URL, forgotten when broken, closed when idle. */
describe('ConnectionPool', () => {
  let clock = 0;
  let opened: FakeConnection[];
  let failNext: boolean;
  let pool: ConnectionPool<FakeConnection>;

  beforeEach(() => {
    clock = 1_000;
    opened = [];
    failNext = false;
    pool = new ConnectionPool<FakeConnection>({
      open: async () => {
        if (failNext) throw new Error('ECONNREFUSED');
        const connection = { id: opened.length + 1, closed: 0 };
        opened.push(connection);
        return connection;
      },
      close: async (connection) => void connection.closed++,
      idleMs: 60_000,
      now: () => clock,
    });
  });
  afterEach(() => pool.close());

  it('opens one connection per key and shares it between concurrent and later uses', async () => {
    const [a, b] = await Promise.all([pool.get('amqp://one'), pool.get('amqp://one')]);
    expect(a).toBe(b);
    expect(await pool.get('amqp://one')).toBe(a);
    expect(await pool.get('amqp://two')).not.toBe(a);
    expect(opened).toHaveLength(2);
    expect(pool.size).toBe(2);
  });

  it('forgets a failed open at once, so the next use tries again', async () => {
    failNext = true;
    await expect(pool.get('amqp://one')).rejects.toThrow('ECONNREFUSED');
    await Promise.resolve();
    expect(pool.size).toBe(0);
    failNext = false;
    expect((await pool.get('amqp://one')).id).toBe(1);
  });

  it('forgets a broken connection, but not a newer one of the same key', async () => {
    const first = await pool.get('amqp://one');
    pool.forget('amqp://one', first);
    const second = await pool.get('amqp://one');
    expect(second).not.toBe(first);
    pool.forget('amqp://one', first);
    expect(await pool.get('amqp://one')).toBe(second);
  });

  it('closes the connections no one used for idleMs, and only those', async () => {
    const busy = await pool.get('amqp://busy');
    const idle = await pool.get('amqp://gone');
    clock += 40_000;
    await pool.get('amqp://busy');
    clock += 30_000;
    expect(await pool.sweep()).toBe(1);
    expect(idle.closed).toBe(1);
    expect(busy.closed).toBe(0);
    expect(pool.size).toBe(1);
    // Used again after it was closed: a new connection.
    expect(await pool.get('amqp://gone')).not.toBe(idle);
  });

  it('sweeps on its own timer, which does not keep the process alive and stops with the last connection', async () => {
    const real = new ConnectionPool<FakeConnection>({
      open: async () => ({ id: 1, closed: 0 }),
      close: async (connection) => void connection.closed++,
      idleMs: 100,
    });
    const connection = await real.get('nats://one');
    const sweeper = (real as unknown as { sweeper?: NodeJS.Timeout }).sweeper;
    expect(sweeper?.hasRef()).toBe(false);
    const deadline = Date.now() + 5_000;
    while (connection.closed === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(connection.closed).toBe(1);
    expect(real.size).toBe(0);
    expect((real as unknown as { sweeper?: NodeJS.Timeout }).sweeper).toBeUndefined();
  });

  it('closes everything on close, a connection still opening included', async () => {
    const open = await pool.get('amqp://one');
    let finish: (connection: FakeConnection) => void = () => undefined;
    const late: FakeConnection = { id: 99, closed: 0 };
    const slow = new ConnectionPool<FakeConnection>({
      open: () => new Promise((resolve) => (finish = resolve)),
      close: async (connection) => void connection.closed++,
    });
    const pending = slow.get('amqp://slow');
    const closing = slow.close();
    finish(late);
    await Promise.all([pending, closing]);
    expect(late.closed).toBeGreaterThanOrEqual(1);
    expect(slow.size).toBe(0);
    await pool.close();
    expect(open.closed).toBe(1);
    expect(pool.size).toBe(0);
  });

  it('closes at once the connections, open or opening, of the keys no sink uses any more, and keeps the others', async () => {
    const kept = await pool.get('amqp://kept');
    const dropped = await pool.get('amqp://dropped');
    let finish: (connection: FakeConnection) => void = () => undefined;
    const late: FakeConnection = { id: 99, closed: 0 };
    const slow = new ConnectionPool<FakeConnection>({
      open: () => new Promise((resolve) => (finish = resolve)),
      close: async (connection) => void connection.closed++,
    });
    const pending = slow.get('amqp://slow');
    expect(await pool.retain((key) => key === 'amqp://kept')).toBe(1);
    expect(await slow.retain(() => false)).toBe(1);
    finish(late);
    await pending;
    await new Promise((resolve) => setImmediate(resolve));
    expect({ kept: kept.closed, dropped: dropped.closed, late: late.closed }).toEqual({ kept: 0, dropped: 1, late: 1 });
    expect([pool.size, slow.size]).toEqual([1, 0]);
    expect(await pool.get('amqp://kept')).toBe(kept);
    expect(await pool.get('amqp://dropped')).not.toBe(dropped);
  });
});
