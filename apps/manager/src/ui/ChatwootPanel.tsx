import { useState } from 'preact/hooks';
import type { ChatwootConfigUpdated } from '../lib/types';
import { api } from '../lib/api';
import { Button, Card, CopyButton, Field, Notice, useAction, useLoad } from './kit';

interface ChatwootConfig {
  chatwoot_enabled: boolean;
  chatwoot_url: string;
  chatwoot_account_id: number;
  chatwoot_inbox_id: number;
  chatwoot_access_token: string;
  chatwoot_ignore_groups: boolean;
  chatwoot_sign_messages: boolean;
  chatwoot_create_new_conversation: boolean;
  chatwoot_inbox_webhook_url: string;
}

/** The Chatwoot bridge (GET|PUT /chatwoot/config) and the inbox webhook URL to paste into Chatwoot. */
export function ChatwootPanel({ token }: { token: string }) {
  const config = useLoad((signal) => api.call<ChatwootConfig>('GET', '/chatwoot/config', { token, signal }), [token]);
  const [webhookUrl, setWebhookUrl] = useState('');
  const shownUrl = webhookUrl || config.data?.chatwoot_inbox_webhook_url;
  return (
    <div class="grid-2">
      <Card title="Chatwoot" testid="chatwoot">
        {config.error ? <Notice kind="error">{config.error}</Notice> : null}
        {/* The form starts from the stored settings once they are read: a late read never overwrites what was typed. */}
        {config.data ? <ChatwootForm token={token} stored={config.data} onSaved={setWebhookUrl} /> : config.loading ? <p class="muted">Loading…</p> : null}
      </Card>
      <Card title="Inbox webhook" testid="chatwoot-webhook">
        {shownUrl ? (
          <>
            <p class="muted small">In Chatwoot: Settings › Inboxes › this API inbox › Webhook URL. Whoever has it can post as Chatwoot: keep it private.</p>
            <code class="break">{shownUrl}</code>
            <div>
              <CopyButton text={shownUrl} label="Copy URL" />
            </div>
          </>
        ) : (
          <p class="muted">Save the settings to get the URL Chatwoot calls.</p>
        )}
      </Card>
    </div>
  );
}

function ChatwootForm({ token, stored, onSaved }: { token: string; stored: ChatwootConfig; onSaved: (webhookUrl: string) => void }) {
  const [enabled, setEnabled] = useState(stored.chatwoot_enabled);
  const [url, setUrl] = useState(stored.chatwoot_url);
  const [accountId, setAccountId] = useState(stored.chatwoot_account_id ? String(stored.chatwoot_account_id) : '');
  const [inboxId, setInboxId] = useState(stored.chatwoot_inbox_id ? String(stored.chatwoot_inbox_id) : '');
  const [accessToken, setAccessToken] = useState('');
  const [storedToken, setStoredToken] = useState(stored.chatwoot_access_token);
  const [ignoreGroups, setIgnoreGroups] = useState(stored.chatwoot_ignore_groups);
  const [signMessages, setSignMessages] = useState(stored.chatwoot_sign_messages);
  const [newConversation, setNewConversation] = useState(stored.chatwoot_create_new_conversation);
  const save = useAction(async () => {
    const reply = await api.call<ChatwootConfigUpdated>('PUT', '/chatwoot/config', {
      token,
      body: {
        enabled,
        url,
        access_token: accessToken,
        account_id: Number(accountId),
        inbox_id: Number(inboxId),
        ignore_groups: ignoreGroups,
        sign_messages: signMessages,
        create_new_conversation: newConversation,
      },
    });
    setStoredToken(accessToken.length > 4 ? `${accessToken.slice(0, 4)}••••` : '••••');
    setAccessToken('');
    onSaved(reply.chatwoot_inbox_webhook_url);
    return reply;
  });
  return (
    <>
      <form
        class="form-grid"
        onSubmit={(event) => {
          event.preventDefault();
          void save.run();
        }}
      >
        <Field label="Chatwoot URL" wide>
          <input name="chatwoot-url" type="url" required placeholder="https://app.chatwoot.com" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </Field>
        <Field label="Account id">
          <input name="chatwoot-account" type="number" min={1} required value={accountId} onInput={(e) => setAccountId(e.currentTarget.value)} />
        </Field>
        <Field label="Inbox id" hint="An API inbox.">
          <input name="chatwoot-inbox" type="number" min={1} required value={inboxId} onInput={(e) => setInboxId(e.currentTarget.value)} />
        </Field>
        <Field label="Access token" hint={storedToken ? `Stored: ${storedToken}. Enter it again to save changes.` : 'A Chatwoot user or agent bot token.'} wide>
          <input name="chatwoot-token" type="password" autoComplete="off" required value={accessToken} onInput={(e) => setAccessToken(e.currentTarget.value)} />
        </Field>
        <div class="field-wide checks">
          <label class="check">
            <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled
          </label>
          <label class="check">
            <input type="checkbox" checked={ignoreGroups} onChange={(e) => setIgnoreGroups(e.currentTarget.checked)} /> Leave groups out
          </label>
          <label class="check">
            <input type="checkbox" checked={signMessages} onChange={(e) => setSignMessages(e.currentTarget.checked)} /> Sign agents' messages
          </label>
          <label class="check">
            <input type="checkbox" checked={newConversation} onChange={(e) => setNewConversation(e.currentTarget.checked)} /> New conversation after one is
            resolved
          </label>
        </div>
        <div class="form-actions">
          <Button type="submit" variant="primary" busy={save.busy}>
            Save
          </Button>
        </div>
      </form>
      {save.result ? <Notice kind="success">{save.result.message}</Notice> : null}
      {save.error ? <Notice kind="error">{save.error}</Notice> : null}
    </>
  );
}
