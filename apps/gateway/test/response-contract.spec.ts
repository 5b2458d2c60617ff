import { INSTANCE_EXAMPLE } from '../src/common/dto/common.examples';
import { InstanceService } from '../src/instance/instance.service';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

/**
 * The e2e suites' contract check (issue #37): an answer that breaks /openapi.json fails the call that
 * saw it (through the harness) or the suite (anything else, at close); conforming answers pass.
 */
describe('the response contract check of the e2e harness', () => {
  let gateway: GatewayHarness;

  beforeAll(async () => {
    gateway = await startGateway();
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await gateway?.close();
  });

  it('should check conforming answers and let them through', async () => {
    const before = gateway.contract.count;
    const { token } = await gateway.createInstance('contract');
    expect((await gateway.call('GET', '/instance/all', { admin: gateway.adminToken })).status).toBe(200);
    // An error answer is checked too: 401 `{error}` on an instance route.
    expect((await gateway.call('GET', '/instance/status', { token: 'nope' })).status).toBe(401);
    expect(token).toEqual(expect.any(String));
    expect(gateway.contract.count - before).toBe(3);
  });

  it('should fail a call whose answer is not what the document says', async () => {
    const spy = jest.spyOn(gateway.app.get(InstanceService), 'listAll').mockResolvedValueOnce([{ ...INSTANCE_EXAMPLE, status: 'sleeping' }] as never);
    await expect(gateway.call('GET', '/instance/all', { admin: gateway.adminToken })).rejects.toThrow(
      /GET \/instance\/all → 200: the body does not match the document: \/0\/status must be equal to one of the allowed values/,
    );
    spy.mockRestore();
  });

  it('should keep what a request made without the harness broke, for the suite to fail on at close', async () => {
    jest.spyOn(gateway.app.get(InstanceService), 'listAll').mockResolvedValueOnce({ not: 'an array' } as never);
    const response = await fetch(`${gateway.baseUrl}/instance/all`, { headers: { admintoken: gateway.adminToken } });
    expect(response.status).toBe(200);
    const [violation, ...rest] = gateway.contract.drain();
    expect(rest).toEqual([]);
    expect(violation.problem).toMatch(/GET \/instance\/all → 200: the body does not match the document: \(body\) must be array/);
  });
});
