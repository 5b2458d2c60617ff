import { startGateway } from './support/gateway-harness';

describe('closing the gateway with /sse streams open (an open console)', () => {
  it('should end the streams and close at once instead of waiting for them', async () => {
    const gw = await startGateway();
    const { token } = await gw.createInstance('sse-shutdown');
    const streams = await Promise.all([1, 2].map(() => fetch(`${gw.baseUrl}/sse?token=${token}`)));
    const ended = streams.map(async (response) => {
      const reader = response.body!.getReader();
      for (;;) if ((await reader.read()).done) return true;
    });
    const started = Date.now();
    await gw.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(Promise.all(ended)).resolves.toEqual([true, true]);
  }, 20_000);
});
