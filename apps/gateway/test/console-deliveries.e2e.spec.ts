import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeliveryRepository, OutboxRepository } from '@gw/persistence';
import { type BrowserContext, chromium } from 'playwright-core';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

const ROOT = join(__dirname, '../../..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The console built by Vite into a temporary directory, as console.e2e builds it. */
function buildConsole(): string {
  const outDir = mkdtempSync(join(tmpdir(), 'console-build-'));
  execFileSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'apps/manager/vite.config.mjs'], {
    cwd: ROOT,
    env: { ...process.env, MANAGER_OUT_DIR: outDir, MANAGER_BUILD_QUIET: '1', NODE_OPTIONS: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return outDir;
}

/**
 * The console's Deliveries view (issue #40) in Chromium: an instance's delivery log with its outcome
 * filter, and the replay of one delivery from its row, which the log then shows as a replay.
 */
describe("the console's Deliveries view (Chromium)", () => {
  let gw: GatewayHarness;
  let consoleDir: string;
  let profileDir: string;
  let context: BrowserContext;
  let instance: { id: string; token: string };
  const events: Record<string, string> = {};

  beforeAll(async () => {
    consoleDir = buildConsole();
    gw = await startGateway({ env: { SSRF_ALLOWLIST: '127.0.0.0/8', CONSOLE_DIR: consoleDir } });
    instance = await gw.createInstance('console-deliveries');
    await gw.call('POST', '/webhook', { token: instance.token, body: { url: 'http://127.0.0.1:9/hook', events: ['messages', 'connection'] } });
    // Two deliveries the relay would have recorded: one delivered, one failed for good.
    for (const [name, type] of [
      ['delivered', 'messages'],
      ['failed', 'connection'],
    ] as const) {
      events[name] = (await gw.db.dataSource.transaction((manager) =>
        new OutboxRepository(gw.db.dataSource).within(manager).insert(instance.id, [{ eventType: type, chatId: name, payload: { EventType: type } }]),
      )) as string;
    }
    const deliveries = new DeliveryRepository(gw.db.dataSource);
    await deliveries.fanOut(10, (_event, webhooks) => webhooks);
    const idOf = async (eventId: string) => String((await gw.db.dataSource.query(`SELECT id FROM webhook_deliveries WHERE event_id = $1`, [eventId]))[0].id);
    await deliveries.markDelivered([{ deliveryId: await idOf(events.delivered), statusCode: 204, latencyMs: 31 }]);
    await deliveries.markAttemptFailed(await idOf(events.failed), 'x', 500, 'receiver answered 500', null, 8);
    profileDir = mkdtempSync(join(tmpdir(), 'console-chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
      viewport: { width: 1360, height: 860 },
    });
  }, 90_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await gw?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
  }, 30_000);

  it('should list the deliveries, filter by outcome, and replay one from its row', async () => {
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    try {
      await page.goto(`${gw.baseUrl}/manager/`);
      await page.fill('input[name=token]', instance.token);
      await page.click('button[type=submit]');
      await page.locator('[data-testid=instance-name]', { hasText: 'console-deliveries' }).waitFor();
      await page.getByRole('tab', { name: 'Deliveries' }).click();
      const row = (eventId: string) => page.locator(`[data-testid=delivery-rows] tr`, { has: page.locator('code', { hasText: new RegExp(`^${eventId}$`) }) });
      await row(events.delivered).locator('.pill', { hasText: 'delivered' }).waitFor();
      expect(await row(events.delivered).textContent()).toContain('31 ms');
      await row(events.failed).getByText('receiver answered 500').waitFor();
      expect(await page.locator('[data-testid=delivery-rows] tbody tr').count()).toBe(2);

      await page.getByLabel('Outcome').selectOption('failed');
      await page.locator('[data-testid=delivery-rows] tbody tr').first().locator('.pill', { hasText: 'failed' }).waitFor();
      await page.waitForFunction("document.querySelectorAll('[data-testid=delivery-rows] tbody tr').length === 1");

      await row(events.failed).getByRole('button', { name: 'Replay' }).click();
      await page.getByText('Replay queued 1').waitFor();
      await page.getByLabel('Outcome').selectOption('');
      await row(events.failed).locator('.pill', { hasText: 'replay' }).waitFor();
      await row(events.failed).locator('.pill', { hasText: 'pending' }).waitFor();
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
    }
    const { body } = await gw.call('GET', `/webhook/deliveries?eventId=${events.failed}`, { token: instance.token });
    expect(body.deliveries[0]).toMatchObject({ replayed: true, replayed_by: instance.id, outcome: 'pending' });
  }, 60_000);
});
