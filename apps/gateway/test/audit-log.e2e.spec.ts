import { readRetentionConfig, RetentionJob } from '@gw/dispatch';
import { FileRepository, MessageRepository, RetentionRepository } from '@gw/persistence';
import { createLogger, EnvReader } from '@gw/platform';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

/**
 * The audit log through HTTP (issue #40): configuration changes are recorded with the token's id (never
 * its value), the client's address, the route and the masked request; an instance reads only its own
 * entries, the admin all of them; filters and paging; the retention purge.
 */
describe('audit log (GET /admin/audit, GET /instance/audit)', () => {
  let gw: GatewayHarness;
  let first: { id: string; token: string };
  let second: { id: string; token: string };

  const adminAudit = (query = '') => gw.call('GET', `/admin/audit${query}`, { admin: gw.adminToken });
  const instanceAudit = (token: string, query = '') => gw.call('GET', `/instance/audit${query}`, { token });

  beforeAll(async () => {
    gw = await startGateway({ env: { SSRF_ALLOWLIST: '127.0.0.0/8' } });
    first = await gw.createInstance('audit-one');
    second = await gw.createInstance('audit-two');
    const changes: Array<[string, string, string, unknown]> = [
      ['POST', '/webhook', first.token, { url: 'http://127.0.0.1:9/hook?token=hook-secret-1&x=1', events: ['messages'] }],
      ['POST', '/instance/updatechatbotsettings', first.token, { chatbot_enabled: true, openai_apikey: 'sk-very-secret' }],
      ['PUT', '/chatwoot/config', first.token, { enabled: true, url: 'http://127.0.0.1:9', access_token: 'cw-access-secret', account_id: 1, inbox_id: 1 }],
      ['POST', '/instance/updateInstanceName', second.token, { name: 'renamed-two' }],
      ['POST', '/instance/updateDelaySettings', second.token, { msg_delay_min: 'soon' }],
    ];
    for (const [method, path, token, body] of changes) await gw.call(method, path, { token, body });
    await gw.call('POST', '/globalwebhook', { admin: gw.adminToken, body: { url: 'http://user:broker-pass@127.0.0.1:9/global', events: ['messages'] } });
  }, 30_000);

  afterAll(() => gw?.close());

  it('should record an instance change with its instance id as actor, the address and route, never a token', async () => {
    const { status, body } = await instanceAudit(first.token, '?action=webhook.configure');
    expect(status).toBe(200);
    expect(body.entries).toHaveLength(1);
    expect(body.entries[0]).toMatchObject({
      actor: first.id,
      instance_id: first.id,
      address: '127.0.0.1',
      method: 'POST',
      route: '/webhook',
      action: 'webhook.configure',
      status: 200,
      changes: { events: ['messages'] },
    });
    expect(new Date(body.entries[0].at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const everything = JSON.stringify((await adminAudit()).body);
    for (const token of [first.token, second.token, gw.adminToken]) expect(everything).not.toContain(token);
  });

  it('should mask secrets: a URL query token, a chatbot API key, a Chatwoot access token, URL credentials', async () => {
    const own = (await instanceAudit(first.token)).body.entries as Array<{ action: string; changes: Record<string, unknown> }>;
    const byAction = (action: string) => own.find((entry) => entry.action === action)!.changes;
    expect(byAction('webhook.configure').url).toBe('http://127.0.0.1:9/hook?token=[masked]&x=1');
    expect(byAction('instance.chatbotSettings')).toEqual({ chatbot_enabled: true, openai_apikey: '[masked]' });
    expect(byAction('chatwoot.configure')).toMatchObject({ access_token: '[masked]', url: 'http://127.0.0.1:9', account_id: 1 });
    const global = (await adminAudit('?action=globalwebhook.configure')).body.entries;
    expect(global).toEqual([expect.objectContaining({ actor: 'admin', instance_id: null, route: '/globalwebhook' })]);
    expect(global[0].changes.url).not.toContain('broker-pass');
    const everything = JSON.stringify((await adminAudit()).body);
    for (const secret of ['hook-secret-1', 'sk-very-secret', 'cw-access-secret', 'broker-pass']) expect(everything).not.toContain(secret);
  });

  it('should show an instance only its own entries, whatever it filters by', async () => {
    const own = (await instanceAudit(second.token)).body;
    expect(own.entries.map((entry: { action: string }) => entry.action)).toEqual(['instance.delaySettings', 'instance.rename', 'instance.create']);
    expect(own.entries.every((entry: { instance_id: string }) => entry.instance_id === second.id)).toBe(true);
    // `instance` is the admin's filter: an instance token cannot point it at another instance.
    const other = (await instanceAudit(second.token, `?instance=${first.id}&action=webhook.configure`)).body;
    expect(other.entries).toEqual([]);
  });

  it('should record a refused change with its status, and the admin creation with the new instance', async () => {
    const own = (await instanceAudit(second.token)).body.entries;
    expect(own[0]).toMatchObject({ action: 'instance.delaySettings', status: 400, changes: { msg_delay_min: 'soon' } });
    expect(own[2]).toMatchObject({ action: 'instance.create', actor: 'admin', route: '/instance/create', status: 200, changes: { name: 'audit-two' } });
    // The operator's address is the admin's to see, not the tenant's.
    expect(own[2].address).toBe('');
    expect((await adminAudit(`?instance=${second.id}&action=instance.create`)).body.entries[0].address).toBe('127.0.0.1');
  });

  it('should show the admin every entry, filtered by instance, route and time, paged by offset or cursor', async () => {
    const all = (await adminAudit()).body;
    expect(all.pagination.totalRecords).toBe(8);
    expect(all.entries.map((entry: { id: string }) => Number(entry.id))).toEqual(
      [...all.entries.map((entry: { id: string }) => Number(entry.id))].sort((a, b) => b - a),
    );
    expect((await adminAudit(`?instance=${second.id}`)).body.pagination.totalRecords).toBe(3);
    expect((await adminAudit('?route=/instance/updateInstanceName')).body.entries).toEqual([
      expect.objectContaining({ actor: second.id, changes: { name: 'renamed-two' } }),
    ]);
    expect((await adminAudit(`?from=${Date.now() + 60_000}`)).body.entries).toEqual([]);
    expect((await adminAudit(`?to=${new Date(Date.now() + 60_000).toISOString()}`)).body.pagination.totalRecords).toBe(8);
    const pageOne = (await adminAudit('?limit=3')).body;
    const pageTwo = (await adminAudit(`?limit=3&cursor=${pageOne.next_cursor}`)).body;
    const byOffset = (await adminAudit('?limit=3&offset=3')).body;
    expect(pageTwo.entries.map((entry: { id: string }) => entry.id)).toEqual(byOffset.entries.map((entry: { id: string }) => entry.id));
    expect(Number(pageTwo.entries[0].id)).toBeLessThan(Number(pageOne.entries[2].id));
  });

  it.each([
    ['?limit=0', /^limit must be at least 1/],
    ['?limit=abc', /^limit must be an integer/],
    ['?offset=-1', /^offset must not be negative/],
    ['?from=yesterday', /^from must be an ISO 8601 date-time/],
    ['?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', /^from must not be after to/],
    ['?cursor=x1', /^cursor must be/],
  ])('should answer 400 {error} for %s', async (query, message) => {
    const { status, body } = await adminAudit(query);
    expect(status).toBe(400);
    expect(body.error).toMatch(message);
  });

  it('should refuse an instance token on /admin/audit and the admin token on /instance/audit', async () => {
    expect((await gw.call('GET', '/admin/audit', { admin: first.token })).status).toBe(403);
    expect((await gw.call('GET', '/instance/audit', { token: gw.adminToken })).status).toBe(401);
  });

  it("should purge entries past AUDIT_RETENTION_DAYS in the dispatcher's retention job", async () => {
    const config = readRetentionConfig(new EnvReader({ AUDIT_RETENTION_DAYS: '30' }));
    expect(config.auditRetentionDays).toBe(30);
    await gw.db.dataSource.query(`UPDATE audit_log SET at = now() - interval '31 days' WHERE action = 'instance.rename'`);
    const sut = new RetentionJob(
      new RetentionRepository(gw.db.dataSource),
      new MessageRepository(gw.db.dataSource),
      new FileRepository(gw.db.dataSource),
      config,
      createLogger('retention-test', 'silent'),
    );
    expect(await sut.runOnce()).toMatchObject({ audit: 1 });
    expect((await adminAudit('?action=instance.rename')).body.entries).toEqual([]);
    expect((await adminAudit()).body.pagination.totalRecords).toBe(7);
  });
});
