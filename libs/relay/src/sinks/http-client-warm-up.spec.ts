import { warmHttpClient } from './http-client-warm-up';

/** TCP servers and sockets open in this process. */
const openTcpHandles = () => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap' || kind === 'TCPSocketWrap').length;

describe('warmHttpClient', () => {
  it('sends its requests to a loopback server of its own and leaves nothing open', async () => {
    const handlesBefore = openTcpHandles();
    const answered = await warmHttpClient();
    expect(answered).toBe(200);
    // Sockets close on the next turns of the loop once both ends are closed.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(openTcpHandles()).toBeLessThanOrEqual(handlesBefore);
  });
});
