import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { DEFAULT_PROXY_FALLBACK, relativeTime } from '../lib/format';
import type { Instance, Privacy, Proxy, ProxyChanged } from '../lib/types';
import { Button, Card, Field, Notice, SettingsForm, useAction, useLoad } from './kit';

const AUDIENCE = ['all', 'contacts', 'contact_blacklist', 'none'];
const PRIVACY_CHOICES: Record<keyof Privacy, { label: string; values: string[] }> = {
  last: { label: 'Last seen', values: AUDIENCE },
  online: { label: 'Online', values: ['all', 'match_last_seen'] },
  profile: { label: 'Profile photo', values: AUDIENCE },
  status: { label: 'Status', values: AUDIENCE },
  readreceipts: { label: 'Read receipts', values: ['all', 'none'] },
  groupadd: { label: 'Who can add to groups', values: AUDIENCE },
  calladd: { label: 'Who can call', values: ['all', 'known'] },
};

export function SettingsPanel({ instance, token, reload }: { instance: Instance; token: string; reload: () => Promise<Instance> }) {
  return (
    <div class="grid-2">
      <div class="stack">
        <DelayCard instance={instance} token={token} reload={reload} />
        <PresenceCard token={token} current={instance.currentPresence} connected={instance.status === 'connected'} />
      </div>
      <div class="stack">
        <ProxyCard token={token} />
        <PrivacyCard token={token} connected={instance.status === 'connected'} />
      </div>
    </div>
  );
}

function DelayCard({ instance, token, reload }: { instance: Instance; token: string; reload: () => Promise<Instance> }) {
  const [min, setMin] = useState(String(instance.msg_delay_min ?? 0));
  const [max, setMax] = useState(String(instance.msg_delay_max ?? 0));
  const save = useAction(async () => {
    const reply = await api.call('POST', '/instance/updateDelaySettings', { token, body: { msg_delay_min: Number(min), msg_delay_max: Number(max) } });
    await reload();
    return reply;
  });
  return (
    <Card title="Delay between queued sends">
      <SettingsForm action={save}>
        <Field label="Minimum (seconds)">
          <input type="number" min={0} max={86400} value={min} onInput={(e) => setMin(e.currentTarget.value)} />
        </Field>
        <Field label="Maximum (seconds)">
          <input type="number" min={0} max={86400} value={max} onInput={(e) => setMax(e.currentTarget.value)} />
        </Field>
      </SettingsForm>
      <p class="muted small">Async sends and campaigns wait a random time between the two, so a burst does not look like a robot.</p>
    </Card>
  );
}

function PresenceCard({ token, current, connected }: { token: string; current: string; connected: boolean }) {
  const set = useAction((presence: string) => api.call('POST', '/instance/presence', { token, body: { presence } }));
  return (
    <Card title="Presence">
      <p class="muted small">Now: {current || 'unknown'}. “Available” shows the number online to contacts.</p>
      <div class="form-actions">
        <Button busy={set.busy} disabled={!connected} onClick={() => void set.run('available')}>
          Available
        </Button>
        <Button busy={set.busy} disabled={!connected} onClick={() => void set.run('unavailable')}>
          Unavailable
        </Button>
        {set.result ? <span class="ok">Updated</span> : null}
      </div>
      {set.error ? <Notice kind="error">{set.error}</Notice> : null}
    </Card>
  );
}

function ProxyCard({ token }: { token: string }) {
  const proxy = useLoad((signal) => api.call<Proxy>('GET', '/instance/proxy', { token, signal }), [token]);
  // The mode picked in the form, else the stored one: a load answered after the pick must not undo it (a slow
  // GET /instance/proxy put a picked "custom" back to the stored mode and hid its fields).
  const [picked, setPicked] = useState<string | null>(null);
  const mode = picked ?? proxy.data?.mode ?? 'internal';
  const [url, setUrl] = useState('');
  const [fallback, setFallback] = useState(DEFAULT_PROXY_FALLBACK);
  const save = useAction(async () => {
    const body: Record<string, unknown> = { mode };
    if (mode === 'custom') {
      body.proxy_url = url;
      if (fallback) body.proxy_fallback = fallback;
    }
    if (mode === 'none') body.confirm_no_proxy = true;
    const reply = await api.call<ProxyChanged>('POST', '/instance/proxy', { token, body });
    proxy.setData(reply.proxy);
    setPicked(null);
    setUrl('');
    return reply;
  });
  const remove = useAction(async () => {
    const reply = await api.call<ProxyChanged>('DELETE', '/instance/proxy', { token });
    proxy.setData(reply.proxy);
    setPicked(null);
    return reply;
  });
  const data = proxy.data;
  return (
    <Card title="Proxy">
      {proxy.error ? <Notice kind="error">{proxy.error}</Notice> : null}
      {data ? (
        <dl class="facts">
          <dt>Mode</dt>
          <dd>
            {data.mode}
            {data.effective_mode !== data.mode ? ` (in effect: ${data.effective_mode})` : ''}
          </dd>
          {data.proxy_url ? (
            <>
              <dt>Proxy</dt>
              <dd>
                <code>{data.proxy_url}</code>
              </dd>
            </>
          ) : null}
          {data.proxy_fallback ? (
            <>
              <dt>Fallback</dt>
              <dd>{data.proxy_fallback}</dd>
            </>
          ) : null}
          {data.last_test_at ? (
            <>
              <dt>Last test</dt>
              <dd>
                {relativeTime(data.last_test_at)}
                {data.last_test_error ? ` · ${data.last_test_error}` : ' · ok'}
              </dd>
            </>
          ) : null}
        </dl>
      ) : null}
      <form
        class="form-grid"
        onSubmit={(event) => {
          event.preventDefault();
          void save.run();
        }}
      >
        <Field label="Mode">
          <select value={mode} onChange={(e) => setPicked(e.currentTarget.value)}>
            <option value="internal">internal</option>
            <option value="custom">custom proxy</option>
            <option value="none">none (direct)</option>
          </select>
        </Field>
        {mode === 'custom' ? (
          <>
            <Field label="Proxy URL" hint="http://, https://, socks5:// with user:password@ when needed; tested before it is saved.">
              <input required placeholder="socks5://user:pass@host:1080" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
            </Field>
            <Field label="Fallback" hint="internal (the managed pools; 2.1.0 called it internal_proxy), never, or another proxy URL.">
              <input name="proxy_fallback" value={fallback} onInput={(e) => setFallback(e.currentTarget.value)} />
            </Field>
          </>
        ) : null}
        <div class="form-actions">
          <Button type="submit" busy={save.busy}>
            Save proxy
          </Button>
          <Button variant="ghost" busy={remove.busy} onClick={() => void remove.run()}>
            Remove
          </Button>
        </div>
      </form>
      {save.result ? <Notice kind="success">{save.result.details}</Notice> : null}
      {save.error || remove.error ? <Notice kind="error">{save.error || remove.error}</Notice> : null}
    </Card>
  );
}

function PrivacyCard({ token, connected }: { token: string; connected: boolean }) {
  const privacy = useLoad(
    (signal) => (connected ? api.call<Privacy>('GET', '/instance/privacy', { token, signal }) : Promise.resolve(undefined)),
    [token, connected],
  );
  const [draft, setDraft] = useState<Partial<Privacy>>({});
  const save = useAction(async () => {
    const reply = await api.call<Privacy>('POST', '/instance/privacy', { token, body: draft });
    privacy.setData(reply);
    setDraft({});
    return reply;
  });
  if (!connected)
    return (
      <Card title="Privacy">
        <p class="muted">Privacy settings live on WhatsApp: connect the instance to read and change them.</p>
      </Card>
    );
  const values = { ...(privacy.data ?? {}), ...draft } as Partial<Privacy>;
  return (
    <Card title="Privacy">
      {privacy.error ? <Notice kind="error">{privacy.error}</Notice> : null}
      <SettingsForm action={save} submitLabel="Save privacy" disabled={!Object.keys(draft).length}>
        {(Object.keys(PRIVACY_CHOICES) as Array<keyof Privacy>).map((key) => (
          <Field label={PRIVACY_CHOICES[key].label}>
            <select value={values[key] ?? ''} onChange={(e) => setDraft({ ...draft, [key]: e.currentTarget.value })} disabled={!privacy.data}>
              {values[key] === undefined ? <option value="">…</option> : null}
              {PRIVACY_CHOICES[key].values.map((value) => (
                <option value={value}>{value}</option>
              ))}
            </select>
          </Field>
        ))}
      </SettingsForm>
    </Card>
  );
}
