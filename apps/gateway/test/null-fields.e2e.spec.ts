import { startGateway, type GatewayHarness } from './support/gateway-harness';

/**
 * A JSON null in an optional body field is the field left out (as uazapiGO's Go decoder reads it), never
 * a 500: `@IsOptional()` lets null through its rules, and the services called methods on it or wrote it
 * to a NOT NULL column. A null where a value is required is a 400 naming the field.
 */
describe('null in optional body fields', () => {
  let gw: GatewayHarness;
  let instance: { id: string; token: string };

  beforeAll(async () => {
    gw = await startGateway();
    instance = await gw.createInstance('null-fields');
  });

  afterAll(() => gw.close());

  it('should leave an admin field as it was when it is sent as null', async () => {
    const set = await gw.call('POST', '/instance/updateAdminFields', { admin: gw.adminToken, body: { id: instance.id, adminField01: 'cliente-42' } });
    expect(set.status).toBe(200);
    const { status, body } = await gw.call('POST', '/instance/updateAdminFields', {
      admin: gw.adminToken,
      body: { id: instance.id, adminField01: null, adminField02: 'b' },
    });
    expect({ status, adminField01: body.adminField01, adminField02: body.adminField02 }).toEqual({
      status: 200,
      adminField01: 'cliente-42',
      adminField02: 'b',
    });
  });

  it('should read a null NATS subject prefix as absent', async () => {
    const { status, body } = await gw.call('POST', '/sink/nats', { token: instance.token, body: { url: 'nats://127.0.0.1:4222', subjectPrefix: null } });
    // Without SSRF_ALLOWLIST the loopback broker is refused: the prefix was read as absent, not a TypeError.
    expect({ status, body }).toEqual({ status: 400, body: { error: expect.stringMatching(/^url refused/) } });
  });

  it('should refuse null where a value is required, naming the field', async () => {
    const { status, body } = await gw.call('POST', '/instance/updateAdminFields', { admin: gw.adminToken, body: { id: null, adminField01: 'x' } });
    expect({ status, body }).toEqual({ status: 400, body: { error: 'id must be a string' } });
  });
});
