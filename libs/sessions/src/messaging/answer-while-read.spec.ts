import { answerWhileRead } from './answer-while-read';

describe(answerWhileRead.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A query whose answer the test gives (or withholds). */
  const query = <T>() => {
    let answer!: (value: T) => void;
    let fail!: (error: Error) => void;
    const promise = new Promise<T>((resolve, reject) => {
      answer = resolve;
      fail = reject;
    });
    return { promise, answer, fail };
  };

  it('should answer what WhatsApp answered while the socket is read', async () => {
    const asked = query<string>();
    const result = answerWhileRead(asked.promise, 3_000, () => false);
    asked.answer('Flood Group');
    await expect(result).resolves.toBe('Flood Group');
  });

  it('should not wait at all when the socket is not being read, and hand a later answer to onLate', async () => {
    const asked = query<string>();
    const late = jest.fn();
    await expect(answerWhileRead(asked.promise, 3_000, () => true, late)).resolves.toBeNull();
    asked.answer('Flood Group');
    await Promise.resolve();
    expect(late).toHaveBeenCalledWith('Flood Group');
  });

  it('should stop waiting once the socket stops being read, well before the timeout', async () => {
    const asked = query<string>();
    let stuck = false;
    const late = jest.fn();
    const result = answerWhileRead(asked.promise, 3_000, () => stuck, late);
    await jest.advanceTimersByTimeAsync(100);
    stuck = true;
    await jest.advanceTimersByTimeAsync(40);
    await expect(result).resolves.toBeNull();
    asked.answer('late');
    await Promise.resolve();
    expect(late).toHaveBeenCalledWith('late');
  });

  it('should give up at the timeout, and pass a failed query on', async () => {
    const slow = query<string>();
    const result = answerWhileRead(slow.promise, 3_000, () => false);
    await jest.advanceTimersByTimeAsync(3_000);
    await expect(result).resolves.toBeNull();

    const failing = query<string>();
    const failed = answerWhileRead(failing.promise, 3_000, () => false);
    failing.fail(new Error('item-not-found'));
    await expect(failed).rejects.toThrow('item-not-found');
    // A failure after the wait ended goes nowhere (no unhandled rejection).
    const abandoned = query<string>();
    await expect(answerWhileRead(abandoned.promise, 3_000, () => true)).resolves.toBeNull();
    abandoned.fail(new Error('timed out'));
    await Promise.resolve();
  });
});
