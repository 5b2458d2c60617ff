import { GroupCommit } from './group-commit';

describe(GroupCommit.name, () => {
  /** A writer whose statements the test completes by hand. */
  function writer(failMany = false) {
    const statements: Array<{ items: string[]; done: () => void }> = [];
    const statement = (items: string[]) =>
      new Promise<string[]>((resolve, reject) =>
        statements.push({ items, done: () => (failMany && items.length > 1 ? reject(new Error('deadlock')) : resolve(items.map((item) => `ok ${item}`))) }),
      );
    return { statements, many: statement, one: async (item: string) => (await statement([item]))[0] };
  }
  const settled = () => new Promise((resolve) => setImmediate(resolve));

  it('should write a lone item at once, and the items arriving meanwhile together in the next statement', async () => {
    const w = writer();
    const group = new GroupCommit<string, string>(w.many, w.one, { maxBatch: 10, maxInFlight: 1 });
    const first = group.write('a');
    const rest = ['b', 'c', 'd'].map((item) => group.write(item));
    expect(w.statements.map((s) => s.items)).toEqual([['a']]);
    w.statements[0].done();
    expect(await first).toBe('ok a');
    await settled();
    expect(w.statements.map((s) => s.items)).toEqual([['a'], ['b', 'c', 'd']]);
    w.statements[1].done();
    expect(await Promise.all(rest)).toEqual(['ok b', 'ok c', 'ok d']);
    expect(group.stats).toEqual({ statements: 2, items: 4, fallbacks: 0 });
  });

  it('should never put two items with the same key in one statement, nor more than maxBatch, and carry them sorted by key', async () => {
    const w = writer();
    const group = new GroupCommit<string, string>(w.many, w.one, { maxBatch: 2, maxInFlight: 1, key: (item) => item.split(':')[0] });
    const all = ['x:1', 'x:2', 'y:1', 'z:1', 'x:3'].map((item) => group.write(item));
    for (let i = 0; i < 3; i++) {
      w.statements[i].done();
      await settled();
    }
    expect(w.statements.map((s) => s.items)).toEqual([['x:1'], ['x:2', 'y:1'], ['x:3', 'z:1']]);
    expect(await Promise.all(all)).toEqual(['ok x:1', 'ok x:2', 'ok y:1', 'ok z:1', 'ok x:3']);
  });

  it('should let no item overtake an earlier one of its key in another statement in flight, while other keys go on', async () => {
    const w = writer();
    const group = new GroupCommit<string, string>(w.many, w.one, { maxBatch: 10, maxInFlight: 2, key: (item) => item.split(':')[0] });
    const first = group.write('x:1');
    // x:1 is in flight: the second statement takes y:1 and leaves both later x items, in their order.
    const rest = ['x:2', 'y:1', 'x:3'].map((item) => group.write(item));
    await settled();
    expect(w.statements.map((s) => s.items)).toEqual([['x:1'], ['y:1']]);
    // Only items of keys in flight wait: no empty statement, nothing more until x:1 ends.
    const x4 = group.write('x:4');
    await settled();
    expect(w.statements).toHaveLength(2);
    w.statements[1].done();
    await settled();
    expect(w.statements).toHaveLength(2);
    w.statements[0].done();
    expect(await first).toBe('ok x:1');
    await settled();
    expect(w.statements.map((s) => s.items)).toEqual([['x:1'], ['y:1'], ['x:2']]);
    w.statements[2].done();
    await settled();
    w.statements[3].done();
    await settled();
    w.statements[4].done();
    expect(await Promise.all([...rest, x4])).toEqual(['ok x:2', 'ok y:1', 'ok x:3', 'ok x:4']);
    expect(w.statements.map((s) => s.items)).toEqual([['x:1'], ['y:1'], ['x:2'], ['x:3'], ['x:4']]);
  });

  it('should start a statement beside one in flight only once that one is slow, and never more than slow.maxInFlight', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    try {
      const w = writer();
      const group = new GroupCommit<string, string>(w.many, w.one, {
        maxBatch: 10,
        maxInFlight: 1,
        key: (item) => item.split(':')[0],
        slow: { afterMs: 100, maxInFlight: 2 },
      });
      const stuck = group.write('x:1');
      const behind = ['y:1', 'z:1'].map((item) => group.write(item));
      await settled();
      // A young statement in flight: the others wait for it, as with one statement in flight.
      jest.advanceTimersByTime(99);
      await settled();
      expect(w.statements.map((s) => s.items)).toEqual([['x:1']]);
      // It is slow now: the items behind it go together beside it.
      jest.advanceTimersByTime(2);
      await settled();
      expect(w.statements.map((s) => s.items)).toEqual([['x:1'], ['y:1', 'z:1']]);
      w.statements[1].done();
      expect(await Promise.all(behind)).toEqual(['ok y:1', 'ok z:1']);
      // Two in flight at most: the second slow as well, a third waits for one of them to end.
      const third = group.write('v:1');
      await settled();
      expect(w.statements).toHaveLength(3);
      const fourth = group.write('u:1');
      jest.advanceTimersByTime(200);
      await settled();
      expect(w.statements).toHaveLength(3);
      w.statements[0].done();
      expect(await stuck).toBe('ok x:1');
      await settled();
      expect(w.statements.map((s) => s.items)).toEqual([['x:1'], ['y:1', 'z:1'], ['v:1'], ['u:1']]);
      w.statements[2].done();
      w.statements[3].done();
      expect(await Promise.all([third, fourth])).toEqual(['ok v:1', 'ok u:1']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('should write each item of a failed group alone, so only a bad item fails its caller', async () => {
    const statements: string[][] = [];
    const group = new GroupCommit<string, string>(
      async (items) => {
        statements.push(items);
        throw new Error('one bad row');
      },
      async (item) => {
        statements.push([item]);
        if (item === 'bad') throw new Error('bad row');
        return `ok ${item}`;
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const results = ['a', 'b', 'bad', 'c'].map((item) => group.write(item).catch((error: Error) => error.message));
    expect(await Promise.all(results)).toEqual(['ok a', 'ok b', 'bad row', 'ok c']);
    expect(statements).toEqual([['a'], ['b', 'bad', 'c'], ['b'], ['bad'], ['c']]);
    expect(group.stats.fallbacks).toBe(1);
  });
});
