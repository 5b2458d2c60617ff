import { CHATWOOT_SYNC_DEFAULTS, ChatwootSync, type ChatwootSyncConfig } from '@gw/chatwoot';
import { ChatwootRepository, FileRepository, LidMappingRepository, OutboxCursorRepository } from '@gw/persistence';
import { createLogger, SsrfGuard } from '@gw/platform';
import { FakeChatwoot } from './fake-chatwoot';
import { Stack, waitFor } from './stack';

/** The stack plus a loopback Chatwoot and the bridge's runner (as the webhook relay hosts it), retries shortened. */
export class ChatwootStack extends Stack {
  readonly chatwoot = new FakeChatwoot();
  sync?: ChatwootSync;

  static readonly syncConfig = (overrides: Partial<ChatwootSyncConfig> = {}): ChatwootSyncConfig => ({
    ...CHATWOOT_SYNC_DEFAULTS,
    runnerId: 'chatwoot-test',
    pollIntervalMs: 100,
    claimMs: 4_000,
    requestTimeoutMs: 3_000,
    retryScheduleMs: [200, 400, 800],
    ssrf: new SsrfGuard(['127.0.0.0/8']),
    ...overrides,
  });

  async startAll(): Promise<void> {
    await this.start();
    await this.chatwoot.start();
  }

  startSync(overrides: Partial<ChatwootSyncConfig> = {}): ChatwootSync {
    const ds = this.db.dataSource;
    this.sync = new ChatwootSync(
      new OutboxCursorRepository(ds),
      new ChatwootRepository(ds),
      new LidMappingRepository(ds),
      new FileRepository(ds),
      this.bus,
      ChatwootStack.syncConfig(overrides),
      createLogger('chatwoot-sync', process.env.TEST_LOG_LEVEL ?? 'silent'),
    );
    this.sync.start();
    return this.sync;
  }

  async stopAll(): Promise<void> {
    await this.sync?.stop();
    await this.chatwoot.stop();
    await this.stop();
  }

  /** PUT /chatwoot/config at the loopback Chatwoot; its webhooks go to the URL answered (on this gateway). */
  async configure(token: string, extra: Record<string, unknown> = {}): Promise<string> {
    const { status, body } = await this.gw.call('PUT', '/chatwoot/config', {
      token,
      body: {
        enabled: true,
        url: this.chatwoot.baseUrl,
        access_token: this.chatwoot.token,
        account_id: this.chatwoot.accountId,
        inbox_id: this.chatwoot.inboxId,
        ...extra,
      },
    });
    if (status !== 200) throw new Error(`PUT /chatwoot/config: ${status} ${JSON.stringify(body)}`);
    const url = new URL(body.chatwoot_inbox_webhook_url);
    this.chatwoot.webhookUrl = `${this.gw.baseUrl}${url.pathname}`;
    this.sync?.refresh();
    return this.chatwoot.webhookUrl;
  }

  /** Waits until the pending bridge jobs of the instance are done. */
  async settled(instanceId: string, timeoutMs = 20_000): Promise<void> {
    const repository = new ChatwootRepository(this.db.dataSource);
    await waitFor(
      () => repository.pending(instanceId),
      (pending) => pending.length === 0,
      timeoutMs,
      'the chatwoot jobs to be done',
    );
  }
}
