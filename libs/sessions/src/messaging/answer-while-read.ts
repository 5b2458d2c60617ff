/** How often a wait for WhatsApp's answer looks whether its socket is still read. */
const STUCK_POLL_MS = 20;

/**
 * WhatsApp's answer to a query a write asked (a group's name, a number's LID), or null when it takes
 * longer than `timeoutMs`, or once the socket it would come on is not being read (`stuck`: frames held,
 * the socket paused, or Baileys' decrypts waiting for the queue's room). The write holds the socket's
 * queue, the queue's room holds the frames, and the answer is a frame behind them: waiting for it only
 * ended at the timeout (bench/inbound stalled 2.6 s in every run). The query goes on; `onLate` gets an
 * answer that comes after all (a cache can keep it for the next write).
 */
export function answerWhileRead<T>(query: Promise<T>, timeoutMs: number, stuck: () => boolean, onLate?: (answer: T) => void): Promise<T | null> {
  let settled = false;
  const late = (answer: T) => {
    if (settled) onLate?.(answer);
  };
  query.then(late, () => undefined);
  if (stuck()) {
    settled = true;
    return Promise.resolve(null);
  }
  return new Promise<T | null>((resolve, reject) => {
    const finish = (value: T | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
      resolve(value);
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    const poll = setInterval(() => {
      if (stuck()) finish(null);
    }, STUCK_POLL_MS);
    query.then(finish, (error: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
      reject(error);
    });
  });
}
