import { InboundQueue } from './inbound-queue';

/** A promise with its resolve, to hold a task at a point of the test's choosing. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe(InboundQueue.name, () => {
  it('should start a pipelined task once the one before handed its write over, not when it finished', async () => {
    const sut = new InboundQueue();
    const log: string[] = [];
    const commit = gate();
    const first = sut.run(async () => {
      log.push('first prepares');
      sut.handedOver();
      await commit.promise;
      log.push('first committed');
    }, 'pipelined');
    const second = sut.run(async () => {
      log.push('second prepares');
    }, 'pipelined');
    await second;
    expect(log).toEqual(['first prepares', 'second prepares']);
    expect(sut.depth).toBe(1);
    commit.open();
    await first;
    expect(log).toEqual(['first prepares', 'second prepares', 'first committed']);
    expect(sut.depth).toBe(0);
  });

  it('should start the next task only when a pipelined task that never hands over has finished', async () => {
    const sut = new InboundQueue();
    const log: string[] = [];
    const hold = gate();
    void sut.run(async () => {
      await hold.promise;
      log.push('first');
    }, 'pipelined');
    const second = sut.run(() => void log.push('second'), 'pipelined');
    await tick();
    expect(log).toEqual([]);
    hold.open();
    await second;
    expect(log).toEqual(['first', 'second']);
  });

  it('should run a serial task after every earlier task finished, and the next after it finished', async () => {
    const sut = new InboundQueue();
    const log: string[] = [];
    const commit = gate();
    const serialHold = gate();
    void sut.run(async () => {
      sut.handedOver();
      await commit.promise;
      log.push('pipelined committed');
    }, 'pipelined');
    const serial = sut.run(async () => {
      log.push('serial starts');
      await serialHold.promise;
      log.push('serial ends');
    });
    const after = sut.run(() => void log.push('after'), 'pipelined');
    await tick();
    expect(log).toEqual([]);
    commit.open();
    await tick();
    expect(log).toEqual(['pipelined committed', 'serial starts']);
    serialHold.open();
    await Promise.all([serial, after]);
    expect(log).toEqual(['pipelined committed', 'serial starts', 'serial ends', 'after']);
  });

  it('should run an ordered task before the earlier commits, and hold its write until every earlier task finished', async () => {
    const sut = new InboundQueue();
    const log: string[] = [];
    const commit = gate();
    void sut.run(async () => {
      sut.handedOver();
      await commit.promise;
      log.push('pipelined committed');
    }, 'pipelined');
    const noWrite = sut.run(() => void log.push('ordered without a write'), 'ordered');
    const writer = sut.run(async () => {
      log.push('ordered prepares');
      await sut.beforeWrite();
      log.push('ordered writes');
    }, 'ordered');
    const after = sut.run(() => void log.push('after'), 'pipelined');
    await noWrite;
    await tick();
    expect(log).toEqual(['ordered without a write', 'ordered prepares']);
    commit.open();
    await Promise.all([writer, after]);
    expect(log).toEqual(['ordered without a write', 'ordered prepares', 'pipelined committed', 'ordered writes', 'after']);
  });

  it("should let a pipelined task wait in settled() for the earlier tasks' commits, not for later ones", async () => {
    const sut = new InboundQueue();
    const log: string[] = [];
    const firstCommit = gate();
    const thirdCommit = gate();
    void sut.run(async () => {
      sut.handedOver();
      await firstCommit.promise;
      log.push('first committed');
    }, 'pipelined');
    const second = sut.run(async () => {
      await sut.settled();
      log.push('second reads');
    }, 'pipelined');
    void sut.run(async () => {
      sut.handedOver();
      await thirdCommit.promise;
    }, 'pipelined');
    await tick();
    expect(log).toEqual([]);
    firstCommit.open();
    await second;
    expect(log).toEqual(['first committed', 'second reads']);
    thirdCommit.open();
  });

  it('should go on after a task that failed, and give the failure to its caller', async () => {
    const sut = new InboundQueue();
    const failed = sut.run(async () => {
      sut.handedOver();
      throw new Error('boom');
    }, 'pipelined');
    await expect(failed).rejects.toThrow('boom');
    await expect(sut.run(() => 'next')).resolves.toBe('next');
    expect(sut.depth).toBe(0);
  });
});
