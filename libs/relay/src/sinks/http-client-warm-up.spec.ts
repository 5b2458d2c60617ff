import { warmHttpClient } from './http-client-warm-up';

/** TCP servers and sockets open in this process. */
const openTcpHandles = () => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap' || kind === 'TCPSocketWrap').length;

describe('warmHttpClient', () => {
  it('sends its requests to a loopback server of its own and leaves nothing open', async () => {
    const handlesBefore = openTcpHandles();
    // A deadline no loaded machine reaches: every round is answered.
    const answered = await warmHttpClient(25, 60_000);
    expect(answered).toBe(200);
    // Sockets close on the next turns of the loop once both ends are closed.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(openTcpHandles()).toBeLessThanOrEqual(handlesBefore);
  });

  it('sends at most 800 by default (100 rounds of 8), within its 2 s deadline', async () => {
    const answered = await warmHttpClient();
    expect(answered % 8).toBe(0);
    expect(answered).toBeGreaterThan(0);
    expect(answered).toBeLessThanOrEqual(800);
  });

  it('stops at its deadline and answers how many it sent by then', async () => {
    const answered = await warmHttpClient(1_000_000, 50);
    expect(answered % 8).toBe(0);
    expect(answered).toBeLessThan(1_000_000 * 8);
  });
});
