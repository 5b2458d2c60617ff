import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import type { Webhook, WebhookError } from '../lib/types';
import { Button, Card, CopyButton, Empty, Notice, useAction, useLoad } from './kit';
import { SinksCard } from './SinksCard';
import { WebhookErrors } from './WebhookErrors';
import { blankWebhook, WebhookForm, webhookFields, type WebhookFields } from './WebhookForm';

/** The instance's webhooks (add, edit, enable, delete) and its failed deliveries. */
export function WebhookPanel({ token }: { token: string }) {
  const hooks = useLoad((signal) => api.call<Webhook[]>('GET', '/webhook', { token, signal }), [token]);
  const errors = useLoad((signal) => api.call<WebhookError[]>('GET', '/webhook/errors', { token, signal }), [token]);
  const [editing, setEditing] = useState<string | 'new' | null>(null);
  const [secret, setSecret] = useState('');
  const save = useAction(async (action: 'add' | 'update' | 'delete', id: string | undefined, fields?: WebhookFields) => {
    const list = await api.call<Webhook[]>('POST', '/webhook', { token, body: { action, ...(id ? { id } : {}), ...(fields ?? {}) } });
    const shown = list.find((entry) => entry.secret);
    if (shown?.secret) setSecret(shown.secret);
    hooks.setData(list);
    setEditing(null);
    return list;
  });
  const list = hooks.data ?? [];
  return (
    <div class="stack">
      <Card
        title="Webhooks"
        testid="webhooks"
        actions={
          editing === null ? (
            <Button variant="primary" class="btn-small" onClick={() => setEditing('new')}>
              + Add webhook
            </Button>
          ) : null
        }
      >
        {hooks.error ? <Notice kind="error">{hooks.error}</Notice> : null}
        {secret ? (
          <Notice kind="success">
            Signing secret (shown once; payloads are signed with it, Standard Webhooks): <code>{secret}</code> <CopyButton text={secret} />
          </Notice>
        ) : null}
        {editing === 'new' ? (
          <WebhookForm
            initial={blankWebhook()}
            submitLabel="Add webhook"
            busy={save.busy}
            onSubmit={(fields) => void save.run('add', undefined, fields)}
            onCancel={() => setEditing(null)}
          />
        ) : null}
        {!list.length && editing === null && !hooks.loading ? <Empty>No webhook: events only reach /sse and the global webhook.</Empty> : null}
        <ul class="rows">
          {list.map((hook) => (
            <li class="row-card">
              {editing === hook.id ? (
                <WebhookForm
                  initial={webhookFields(hook)}
                  submitLabel="Save"
                  busy={save.busy}
                  onSubmit={(fields) => void save.run('update', hook.id, fields)}
                  onCancel={() => setEditing(null)}
                />
              ) : (
                <div class="row-line">
                  <span class={`pill ${hook.enabled ? 'pill-good' : ''}`}>{hook.enabled ? 'on' : 'off'}</span>
                  <div class="grow">
                    <code class="break">{hook.url}</code>
                    <div class="muted small">
                      {hook.events.join(', ') || 'no events'}
                      {hook.excludeMessages?.length ? ` · without ${hook.excludeMessages.join(', ')}` : ''}
                    </div>
                  </div>
                  <Button
                    variant="ghost"
                    class="btn-small"
                    onClick={() => void save.run('update', hook.id, { ...webhookFields(hook), enabled: !hook.enabled })}
                  >
                    {hook.enabled ? 'Disable' : 'Enable'}
                  </Button>
                  <Button variant="ghost" class="btn-small" onClick={() => setEditing(hook.id)}>
                    Edit
                  </Button>
                  <Button variant="ghost" class="btn-small btn-danger-text" onClick={() => void save.run('delete', hook.id)}>
                    Delete
                  </Button>
                </div>
              )}
            </li>
          ))}
        </ul>
        {save.error ? <Notice kind="error">{save.error}</Notice> : null}
      </Card>
      <Card
        title="Failed deliveries"
        actions={
          <Button variant="ghost" class="btn-small" onClick={errors.reload}>
            Refresh
          </Button>
        }
      >
        {errors.error ? <Notice kind="error">{errors.error}</Notice> : <WebhookErrors errors={errors.data ?? []} />}
      </Card>
      <SinksCard token={token} />
    </div>
  );
}
