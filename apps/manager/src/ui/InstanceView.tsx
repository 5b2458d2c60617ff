import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { openEventStream, type StreamState } from '../lib/events';
import { applyConnectionEvent, formatPhone, hibernationToggle, pushEvent, relativeTime } from '../lib/format';
import type { Instance, InstanceConnectionReply, InstanceDisconnectedReply, InstanceStatusReply, MonitorEvent } from '../lib/types';
import { ChatbotPanel } from './ChatbotPanel';
import { ChatwootPanel } from './ChatwootPanel';
import { DeliveriesPanel } from './DeliveriesPanel';
import { EventsPanel } from './EventsPanel';
import { Avatar, Button, Card, Field, Notice, SecretValue, StatusBadge, Tabs, useAction } from './kit';
import { QueuePanel } from './QueuePanel';
import { SendPanel } from './SendPanel';
import { SettingsPanel } from './SettingsPanel';
import { WebhookPanel } from './WebhookPanel';

type Tab = 'overview' | 'send' | 'events' | 'webhook' | 'deliveries' | 'queue' | 'chatbot' | 'chatwoot' | 'settings';

const BROWSERS = ['auto', 'chrome', 'firefox', 'safari', 'edge'];

export function InstanceView(props: { instance: Instance; admin?: string; sandbox: boolean; onChanged: (instance: Instance) => void; onDeleted: () => void }) {
  const [current, setCurrent] = useState<Instance>(props.instance);
  const [tab, setTab] = useState<Tab>('overview');
  const [events, setEvents] = useState<MonitorEvent[]>([]);
  const [stream, setStream] = useState<StreamState>('connecting');
  const token = props.instance.token;
  const onChanged = useRef(props.onChanged);
  onChanged.current = props.onChanged;

  // The list's periodic read is the truth when it is newer than what the stream told.
  useEffect(() => setCurrent((before) => ({ ...before, ...props.instance })), [props.instance]);

  const reload = async () => {
    const reply = await api.call<InstanceStatusReply>('GET', '/instance/status', { token });
    setCurrent(reply.instance);
    onChanged.current(reply.instance);
    return reply.instance;
  };

  // Live: the instance's events over SSE; a connection event changes the status (and the QR) at once.
  useEffect(
    () =>
      openEventStream(
        token,
        (event) => {
          setEvents((list) => pushEvent(list, event));
          if (event.type === 'connection') {
            setCurrent((before) => {
              const next = applyConnectionEvent(before, event.data);
              onChanged.current(next);
              return next;
            });
            // The full record (owner, profile name and picture) once it settled.
            void reload().catch(() => undefined);
          }
        },
        setStream,
      ),
    [token],
  );

  return (
    <div class="page">
      <header class="instance-head">
        <Avatar url={current.profilePicUrl} name={current.profileName || current.name} />
        <div class="instance-head-text">
          <h2 data-testid="instance-name">{current.name}</h2>
          <span class="muted">
            {current.profileName ? `${current.profileName} · ` : ''}
            {formatPhone(current.owner) || 'not linked'}
          </span>
        </div>
        <StatusBadge status={current.status} />
        <span class={`live live-${stream}`} title="Event stream (SSE)">
          {stream === 'open' ? 'live' : stream === 'connecting' ? 'reconnecting…' : 'offline'}
        </span>
      </header>
      <Tabs<Tab>
        tabs={[
          ['overview', 'Overview'],
          ['send', 'Send'],
          ['events', `Events${events.length ? ` (${events.length})` : ''}`],
          ['webhook', 'Webhooks & sinks'],
          ['deliveries', 'Deliveries'],
          ['queue', 'Queue & campaigns'],
          ['chatbot', 'Chatbot'],
          ['chatwoot', 'Chatwoot'],
          ['settings', 'Settings'],
        ]}
        current={tab}
        onChange={setTab}
      />
      {tab === 'overview' ? <Overview instance={current} admin={props.admin} reload={reload} onDeleted={props.onDeleted} setCurrent={setCurrent} /> : null}
      {tab === 'send' ? <SendPanel token={token} sandbox={props.sandbox} /> : null}
      {tab === 'events' ? <EventsPanel events={events} stream={stream} onClear={() => setEvents([])} /> : null}
      {tab === 'webhook' ? <WebhookPanel token={token} /> : null}
      {tab === 'deliveries' ? <DeliveriesPanel token={token} /> : null}
      {tab === 'queue' ? <QueuePanel token={token} /> : null}
      {tab === 'chatbot' ? <ChatbotPanel instance={current} token={token} reload={reload} /> : null}
      {tab === 'chatwoot' ? <ChatwootPanel token={token} /> : null}
      {tab === 'settings' ? <SettingsPanel instance={current} token={token} reload={reload} /> : null}
    </div>
  );
}

function Overview(props: {
  instance: Instance;
  admin?: string;
  reload: () => Promise<Instance>;
  onDeleted: () => void;
  setCurrent: (instance: Instance) => void;
}) {
  const { instance, admin } = props;
  const token = instance.token;
  return (
    <div class="grid-2">
      <ConnectionCard instance={instance} reload={props.reload} setCurrent={props.setCurrent} />
      <div class="stack">
        <Card title="Profile">
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={instance.status} />
            </dd>
            <dt>Number</dt>
            <dd data-testid="owner">{formatPhone(instance.owner) || '—'}</dd>
            <dt>Profile name</dt>
            <dd>{instance.profileName || '—'}</dd>
            <dt>Platform</dt>
            <dd>
              {instance.plataform || '—'}
              {instance.isBusiness ? ' · Business' : ''}
            </dd>
            <dt>Last disconnect</dt>
            <dd>{instance.lastDisconnect ? `${relativeTime(instance.lastDisconnect)} · ${instance.lastDisconnectReason || 'no reason given'}` : '—'}</dd>
            <dt>Instance id</dt>
            <dd>
              <code>{instance.id}</code>
            </dd>
            <dt>Created</dt>
            <dd>{instance.created ? new Date(instance.created).toLocaleString() : '—'}</dd>
          </dl>
        </Card>
        <Card title="Instance token">
          <SecretValue value={token} testid="instance-token" />
          <p class="muted small">
            Send it in the <code>token</code> header. Whoever has it controls this WhatsApp number.
          </p>
        </Card>
        <RenameCard instance={instance} setCurrent={props.setCurrent} />
        {admin ? <AdminFieldsCard instance={instance} admin={admin} setCurrent={props.setCurrent} /> : null}
        <DeleteCard instance={instance} onDeleted={props.onDeleted} />
      </div>
    </div>
  );
}

function ConnectionCard({ instance, reload, setCurrent }: { instance: Instance; reload: () => Promise<Instance>; setCurrent: (instance: Instance) => void }) {
  const token = instance.token;
  const [mode, setMode] = useState<'qr' | 'code'>('qr');
  const [phone, setPhone] = useState('');
  const [browser, setBrowser] = useState('auto');
  const [history, setHistory] = useState('');
  const [armed, setArmed] = useState(false);
  const connect = useAction(async () => {
    const body: Record<string, unknown> = {};
    if (mode === 'code') body.phone = phone.replace(/\D/g, '');
    if (browser !== 'auto') body.browser = browser;
    if (history.trim() !== '') body.history_days = Number(history);
    const reply = await api.call<InstanceConnectionReply>('POST', '/instance/connect', { token, body });
    setCurrent(reply.instance);
    return reply;
  });
  const disconnect = useAction(async () => {
    const reply = await api.call<InstanceDisconnectedReply>('POST', '/instance/disconnect', { token });
    setCurrent(reply.instance);
    return reply;
  });
  // Hibernate (the socket closes, the credentials stay) or wake (connect again, no QR code).
  const toggle = hibernationToggle(instance.status);
  const hibernation = useAction(async () => {
    if (!toggle) return undefined;
    const reply = await api.call<InstanceConnectionReply | InstanceDisconnectedReply>('POST', toggle.path, { token, body: {} });
    setCurrent(reply.instance);
    return reply;
  });
  const toggleButton = toggle ? (
    <Button
      variant={toggle.label === 'Wake' ? 'primary' : 'secondary'}
      busy={hibernation.busy}
      onClick={() => void hibernation.run()}
      data-testid="hibernation"
    >
      {toggle.label}
    </Button>
  ) : null;

  // While connecting, a slow poll too (the stream already brings each new QR and the outcome).
  useEffect(() => {
    if (instance.status !== 'connecting') return;
    const timer = setInterval(() => void reload().catch(() => undefined), 5_000);
    return () => clearInterval(timer);
  }, [instance.status]);

  if (instance.status === 'connected') {
    return (
      <Card title="WhatsApp connection" testid="connection">
        <div class="connected-box">
          <span class="big-check" aria-hidden="true">
            ✓
          </span>
          <div>
            <strong>Connected</strong>
            <p class="muted">
              Linked to {formatPhone(instance.owner) || 'a phone'}
              {instance.profileName ? ` (${instance.profileName})` : ''}.
            </p>
          </div>
        </div>
        <div class="form-actions">
          {armed ? (
            <>
              <Button variant="danger" busy={disconnect.busy} onClick={() => void disconnect.run().then(() => setArmed(false))}>
                Yes, log out
              </Button>
              <Button variant="ghost" onClick={() => setArmed(false)}>
                Stay connected
              </Button>
              <span class="muted small">Linking again needs a new QR code.</span>
            </>
          ) : (
            <>
              {toggleButton}
              <Button variant="secondary" class="btn-danger-text" onClick={() => setArmed(true)}>
                Disconnect and log out…
              </Button>
            </>
          )}
        </div>
        {disconnect.error ? <Notice kind="error">{disconnect.error}</Notice> : null}
        {hibernation.error ? <Notice kind="error">{hibernation.error}</Notice> : null}
      </Card>
    );
  }

  if (instance.status === 'hibernated') {
    return (
      <Card title="WhatsApp connection" testid="connection">
        <p>
          <strong>Hibernated.</strong> The session is paused and uses no memory on the session workers; the credentials are kept, so waking it needs no QR code.
          Sends are refused until then.
        </p>
        <div class="form-actions">{toggleButton}</div>
        {instance.lastDisconnect ? <p class="muted small">Since {relativeTime(instance.lastDisconnect)}</p> : null}
        {hibernation.error ? <Notice kind="error">{hibernation.error}</Notice> : null}
      </Card>
    );
  }

  if (instance.status === 'connecting') {
    return (
      <Card title="WhatsApp connection" testid="connection">
        {instance.paircode ? (
          <div class="pair">
            <p>On the phone: WhatsApp › Linked devices › Link a device › Link with phone number instead, then enter:</p>
            <div class="paircode" data-testid="paircode">
              {instance.paircode}
            </div>
          </div>
        ) : instance.qrcode ? (
          <div class="qr">
            <img src={instance.qrcode} alt="QR code to scan with WhatsApp" data-testid="qrcode" width={264} height={264} />
            <p class="muted small">WhatsApp › Linked devices › Link a device, and scan. The code changes every 20 seconds or so; this one follows by itself.</p>
          </div>
        ) : (
          <p class="muted">
            <span class="spinner" aria-hidden="true" /> Waiting for WhatsApp…
          </p>
        )}
        <div class="form-actions">
          <Button variant="ghost" busy={disconnect.busy} onClick={() => void disconnect.run()}>
            Cancel
          </Button>
        </div>
        {disconnect.error ? <Notice kind="error">{disconnect.error}</Notice> : null}
      </Card>
    );
  }

  return (
    <Card title="WhatsApp connection" testid="connection">
      <p class="muted">Not connected. Link a WhatsApp account by scanning a QR code, or with a pairing code typed on the phone.</p>
      <div class="segmented" role="group">
        <button type="button" class={mode === 'qr' ? 'seg-on' : ''} onClick={() => setMode('qr')}>
          QR code
        </button>
        <button type="button" class={mode === 'code' ? 'seg-on' : ''} onClick={() => setMode('code')}>
          Pairing code
        </button>
      </div>
      <form
        class="form-grid"
        onSubmit={(event) => {
          event.preventDefault();
          void connect.run();
        }}
      >
        {mode === 'code' ? (
          <Field label="Phone number" hint="International format, digits only (e.g. 5511999999999).">
            <input name="phone" inputMode="numeric" required value={phone} onInput={(e) => setPhone(e.currentTarget.value)} />
          </Field>
        ) : null}
        <Field label="Browser" hint="How the device shows on the phone.">
          <select value={browser} onChange={(e) => setBrowser(e.currentTarget.value)}>
            {BROWSERS.map((value) => (
              <option value={value}>{value}</option>
            ))}
          </select>
        </Field>
        <Field label="History (days)" hint="0–365; empty: the default (90).">
          <input type="number" min={0} max={365} value={history} onInput={(e) => setHistory(e.currentTarget.value)} />
        </Field>
        <div class="form-actions">
          <Button type="submit" variant="primary" busy={connect.busy} data-testid="connect">
            {mode === 'qr' ? 'Connect with QR code' : 'Get pairing code'}
          </Button>
        </div>
      </form>
      {instance.lastDisconnectReason ? (
        <p class="muted small">
          Last disconnect {relativeTime(instance.lastDisconnect)}: {instance.lastDisconnectReason}
        </p>
      ) : null}
      {connect.error ? <Notice kind="error">{connect.error}</Notice> : null}
    </Card>
  );
}

function RenameCard({ instance, setCurrent }: { instance: Instance; setCurrent: (instance: Instance) => void }) {
  const [name, setName] = useState(instance.name);
  useEffect(() => setName(instance.name), [instance.name]);
  const rename = useAction(async () => {
    const updated = await api.call<Instance>('POST', '/instance/updateInstanceName', { token: instance.token, body: { name: name.trim() } });
    setCurrent(updated);
    return updated;
  });
  return (
    <Card title="Name">
      <form
        class="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          void rename.run();
        }}
      >
        <input name="rename" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <Button type="submit" busy={rename.busy} disabled={!name.trim() || name.trim() === instance.name}>
          Rename
        </Button>
      </form>
      {rename.error ? <Notice kind="error">{rename.error}</Notice> : null}
    </Card>
  );
}

function AdminFieldsCard({ instance, admin, setCurrent }: { instance: Instance; admin: string; setCurrent: (instance: Instance) => void }) {
  const [field1, setField1] = useState(instance.adminField01);
  const [field2, setField2] = useState(instance.adminField02);
  const save = useAction(async () => {
    const updated = await api.call<Instance>('POST', '/instance/updateAdminFields', {
      admin,
      body: { id: instance.id, adminField01: field1, adminField02: field2 },
    });
    setCurrent(updated);
    return updated;
  });
  return (
    <Card title="Admin fields">
      <form
        class="form-grid"
        onSubmit={(event) => {
          event.preventDefault();
          void save.run();
        }}
      >
        <Field label="Admin field 1">
          <input value={field1} maxLength={255} onInput={(e) => setField1(e.currentTarget.value)} />
        </Field>
        <Field label="Admin field 2">
          <input value={field2} maxLength={255} onInput={(e) => setField2(e.currentTarget.value)} />
        </Field>
        <div class="form-actions">
          <Button type="submit" busy={save.busy}>
            Save
          </Button>
          {save.result && !save.busy ? <span class="ok">Saved</span> : null}
        </div>
      </form>
      {save.error ? <Notice kind="error">{save.error}</Notice> : null}
    </Card>
  );
}

function DeleteCard({ instance, onDeleted }: { instance: Instance; onDeleted: () => void }) {
  const [armed, setArmed] = useState(false);
  const remove = useAction(async () => {
    await api.call('DELETE', '/instance', { token: instance.token });
    onDeleted();
  });
  return (
    <Card title="Delete" class="card-danger">
      <p class="muted small">Logs the device out of WhatsApp and removes the instance, its webhooks and its stored data.</p>
      <div class="form-actions">
        {armed ? (
          <>
            <Button variant="danger" busy={remove.busy} onClick={() => void remove.run()} data-testid="confirm-delete">
              Yes, delete {instance.name}
            </Button>
            <Button variant="ghost" onClick={() => setArmed(false)}>
              Keep it
            </Button>
          </>
        ) : (
          <Button variant="danger" onClick={() => setArmed(true)}>
            Delete instance…
          </Button>
        )}
      </div>
      {remove.error ? <Notice kind="error">{remove.error}</Notice> : null}
    </Card>
  );
}
