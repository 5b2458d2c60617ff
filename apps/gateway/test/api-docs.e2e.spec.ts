import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** /docs in headless Chromium under the console's CSP: Swagger UI renders the document, and the browser refuses nothing. */
describe('API reference page (/docs) in a browser', () => {
  let gateway: GatewayHarness;
  let context: BrowserContext;
  let profileDir: string;

  beforeAll(async () => {
    gateway = await startGateway();
    profileDir = mkdtempSync(join(tmpdir(), 'docs-chromium-'));
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
    });
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    await gateway?.close();
  }, 30_000);

  it('renders every operation group with its styles, nothing refused by the CSP', async () => {
    const page = await context.newPage();
    const refused: string[] = [];
    const failed: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
    });
    page.on('pageerror', (error) => failed.push(error.message));
    page.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));
    const response = await page.goto(`${gateway.baseUrl}/docs`);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    // The document is large: on a busy 2-core machine Swagger UI takes a while to render it.
    await page.locator('.swagger-ui .info .title', { hasText: 'wa-gateway' }).waitFor({ timeout: 90_000 });
    const tags = page.locator('.swagger-ui .opblock-tag-section');
    expect(await tags.count()).toBeGreaterThan(10);
    // An operation group opens, and its operations show.
    await page.locator('.swagger-ui .opblock-tag').first().click();
    await page.locator('.swagger-ui .opblock').first().waitFor({ timeout: 30_000 });
    // Its stylesheets applied: swagger-ui.css (the operation's colours) and index.css (the page's margin).
    type Styled = { margin: string; display: string };
    type Browser = { document: { body: unknown; querySelector(selector: string): unknown }; getComputedStyle(element: unknown): Styled };
    const styles = await page.evaluate(() => {
      const browser = globalThis as unknown as Browser;
      return {
        bodyMargin: browser.getComputedStyle(browser.document.body).margin,
        summaryDisplay: browser.getComputedStyle(browser.document.querySelector('.swagger-ui .opblock-summary')).display,
      };
    });
    expect(styles).toEqual({ bodyMargin: '0px', summaryDisplay: 'flex' });
    expect({ refused, failed }).toEqual({ refused: [], failed: [] });
    await page.close();
  }, 150_000);
});
