import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import type { AdminTokenRotated, RestartScheduled, Webhook, WebhookError } from '../lib/types';
import { Button, Card, CopyButton, Notice, useAction, useLoad } from './kit';
import { GlobalSinksCard } from './GlobalSinksCard';
import { WebhookErrors } from './WebhookErrors';
import { blankWebhook, WebhookForm, webhookFields } from './WebhookForm';

/** The admin's page: the global webhook (every instance's events) and the admin token's rotation. */
export function AdminSettings({ admin, onRotated }: { admin: string; onRotated: (token: string) => void }) {
  // The list form: an empty list when none is set (GET /globalwebhook answers that with a 404, which the browser logs as an error).
  const hook = useLoad(async (signal) => (await api.call<Webhook[]>('GET', '/globalwebhook/all', { admin, signal }))[0] ?? null, [admin]);
  const errors = useLoad((signal) => api.call<WebhookError[]>('GET', '/globalwebhook/errors', { admin, signal }), [admin]);
  const save = useAction(async (fields: ReturnType<typeof blankWebhook>) => {
    const saved = await api.call<Webhook>('POST', '/globalwebhook', { admin, body: fields });
    hook.setData(saved);
    return saved;
  });
  const [armed, setArmed] = useState(false);
  const rotate = useAction(async () => {
    const reply = await api.call<AdminTokenRotated>('POST', '/admin/token/rotate', { admin });
    setArmed(false);
    onRotated(reply.admin_token);
    return reply;
  });
  const restart = useAction(() => api.call<RestartScheduled>('POST', '/admin/restart', { admin }));

  return (
    <div class="page">
      <h2>Global settings</h2>
      <div class="grid-2">
        <div class="stack">
          <Card title="Global webhook" testid="global-webhook">
            <p class="muted small">Receives the events of every instance, besides each instance's own webhooks.</p>
            {hook.error ? <Notice kind="error">{hook.error}</Notice> : null}
            {!hook.loading ? (
              <WebhookForm
                key={hook.data ? hook.data.id : 'none'}
                initial={hook.data ? webhookFields(hook.data) : blankWebhook()}
                submitLabel={hook.data ? 'Save global webhook' : 'Set global webhook'}
                busy={save.busy}
                onSubmit={(fields) => void save.run(fields)}
              />
            ) : null}
            {save.result ? <Notice kind="success">Saved.</Notice> : null}
            {save.result?.secret ? (
              <Notice kind="success">
                Signing secret (shown once): <code>{save.result.secret}</code> <CopyButton text={save.result.secret} />
              </Notice>
            ) : null}
            {save.error ? <Notice kind="error">{save.error}</Notice> : null}
          </Card>
          <Card
            title="Global webhook: failed deliveries"
            actions={
              <Button variant="ghost" class="btn-small" onClick={errors.reload}>
                Refresh
              </Button>
            }
          >
            {errors.error ? <Notice kind="error">{errors.error}</Notice> : <WebhookErrors errors={errors.data ?? []} />}
          </Card>
        </div>
        <div class="stack">
          <Card title="Admin token" testid="admin-token">
            <p class="muted small">
              A new token replaces the current one at once: every script and console using the old one is signed out. This console switches to the new one.
            </p>
            <div class="form-actions">
              {armed ? (
                <>
                  <Button variant="danger" busy={rotate.busy} onClick={() => void rotate.run()}>
                    Rotate now
                  </Button>
                  <Button variant="ghost" onClick={() => setArmed(false)}>
                    Cancel
                  </Button>
                </>
              ) : (
                <Button variant="danger" onClick={() => setArmed(true)}>
                  Rotate admin token…
                </Button>
              )}
            </div>
            {rotate.result ? (
              <Notice kind="success">
                New admin token (store it now, it is not shown again): <code class="break">{rotate.result.admin_token}</code>{' '}
                <CopyButton text={rotate.result.admin_token} />
              </Notice>
            ) : null}
            {rotate.error ? <Notice kind="error">{rotate.error}</Notice> : null}
          </Card>
          <GlobalSinksCard admin={admin} />
          <Card title="Sessions">
            <p class="muted small">Reconnects every session gracefully from its stored credentials (no new QR code).</p>
            <div class="form-actions">
              <Button busy={restart.busy} onClick={() => void restart.run()}>
                Restart all sessions
              </Button>
            </div>
            {restart.result ? <Notice kind="success">{restart.result.message}</Notice> : null}
            {restart.error ? <Notice kind="error">{restart.error}</Notice> : null}
          </Card>
        </div>
      </div>
    </div>
  );
}
