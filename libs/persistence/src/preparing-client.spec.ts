import { Writable } from 'node:stream';
import { coalesceWrites, type CoalescedConnection } from './preparing-client';

/** A socket stand-in that records each write that reached it (one entry per system call a socket would make). */
function recordingStream(): { stream: Writable; calls: string[][] } {
  const calls: string[][] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      calls.push([chunk.toString()]);
      done();
    },
    writev(chunks, done) {
      calls.push(chunks.map(({ chunk }) => (chunk as Buffer).toString()));
      done();
    },
  });
  return { stream, calls };
}

function connectionOn(stream: Writable): CoalescedConnection {
  return {
    stream,
    _send(buffer: Buffer) {
      return this.stream.write(buffer);
    },
  };
}

const turnEnd = () => new Promise((resolve) => setImmediate(resolve));

describe('coalesceWrites', () => {
  it('writes what one turn sent in one call, in order', async () => {
    const { stream, calls } = recordingStream();
    const connection = connectionOn(stream);
    coalesceWrites(connection);
    connection._send(Buffer.from('head'));
    await Promise.resolve(); // a statement written a few microtasks later, as a transaction's first one is
    connection._send(Buffer.from('statement'));
    // pg corks around each statement's messages itself: that nests inside.
    stream.cork();
    connection._send(Buffer.from('tail'));
    connection._send(Buffer.from('COMMIT'));
    stream.uncork();
    expect(calls).toEqual([]);
    await turnEnd();
    expect(calls).toEqual([['head', 'statement', 'tail', 'COMMIT']]);
  });

  it('writes a later turn on its own, and nothing is held once the turn is over', async () => {
    const { stream, calls } = recordingStream();
    const connection = connectionOn(stream);
    coalesceWrites(connection);
    connection._send(Buffer.from('one'));
    await turnEnd();
    connection._send(Buffer.from('two'));
    await turnEnd();
    expect(calls).toEqual([['one'], ['two']]);
    expect(stream.writableCorked).toBe(0);
  });

  it('is not held by fake timers', async () => {
    jest.useFakeTimers();
    try {
      const { stream, calls } = recordingStream();
      const connection = connectionOn(stream);
      coalesceWrites(connection);
      connection._send(Buffer.from('one'));
      await new Promise((resolve) => jest.requireActual<typeof import('node:timers')>('node:timers').setImmediate(resolve));
      expect(calls).toEqual([['one']]);
    } finally {
      jest.useRealTimers();
    }
  });
});
