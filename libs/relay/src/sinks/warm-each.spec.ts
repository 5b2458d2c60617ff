import type { WebhookRow } from '@gw/persistence';
import { warmEach } from './transport';

const target = (url: string): WebhookRow => ({ url }) as WebhookRow;

describe('warmEach', () => {
  it('warms each connection once, at most eight at a time, and counts the targets of those that became ready', async () => {
    let running = 0;
    let most = 0;
    const warmed: string[] = [];
    const targets = [...Array.from({ length: 20 }, (_, n) => target(`b${n}`)), target('b0'), target('b0'), target('b1')];
    const ready = await warmEach(
      targets,
      (row) => row.url,
      async (row) => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        warmed.push(row.url);
        if (row.url === 'b1' || row.url === 'b2') throw new Error('refused');
      },
    );
    expect(warmed.sort()).toEqual(Array.from({ length: 20 }, (_, n) => `b${n}`).sort());
    expect(most).toBe(8);
    // 23 targets; b1 (two targets) and b2 (one) failed.
    expect(ready).toBe(20);
  });

  it('answers 0 for no targets', async () => {
    expect(
      await warmEach(
        [],
        (row) => row.url,
        () => Promise.reject(new Error('never called')),
      ),
    ).toBe(0);
  });
});
