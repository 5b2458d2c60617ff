import { useEffect, useState } from 'preact/hooks';
import { api, type Credentials } from '../lib/api';
import { formatPhone } from '../lib/format';
import type { Instance, InstanceStatusReply, SimPhone } from '../lib/types';
import { Button, Card, Empty, Field, Notice, useAction, useLoad } from './kit';

interface InboxEntry {
  id: string;
  from: string;
  type: string;
  timestamp?: number;
  message: Record<string, unknown>;
}

/** What a message in a phone's inbox says, in one line. */
function inboxText(entry: InboxEntry): string {
  const message = entry.message ?? {};
  const extended = message.extendedTextMessage as { text?: string } | undefined;
  if (typeof message.conversation === 'string') return message.conversation;
  if (extended?.text) return extended.text;
  const kind = Object.keys(message).find((key) => key !== 'messageContextInfo') ?? entry.type;
  const caption = (message[kind] as { caption?: string } | undefined)?.caption;
  return caption ? `[${kind}] ${caption}` : `[${kind}]`;
}

/**
 * The sandbox's simulated phones (`npm run sandbox` only): the gateway relays /sandbox/sim/* to the
 * embedded simulator's control API, so a newcomer pairs an instance and chats without curl.
 */
export function SandboxPanel({ credentials, instances }: { credentials: Credentials; instances: Instance[] }) {
  const auth = credentials.role === 'admin' ? { admin: credentials.token } : { token: credentials.token };
  const phones = useLoad((signal) => api.call<SimPhone[]>('GET', '/sandbox/sim/accounts', { ...auth, signal }), [credentials.token]);
  const [newPhone, setNewPhone] = useState('');
  const [newName, setNewName] = useState('');
  const [selected, setSelected] = useState('');
  const create = useAction(async () => {
    const phone = newPhone.replace(/\D/g, '');
    await api.call('POST', '/sandbox/sim/accounts', { ...auth, body: { phone, name: newName || undefined } });
    setNewPhone('');
    setNewName('');
    setSelected(phone);
    phones.reload();
  });
  const list = phones.data ?? [];
  const current = list.find((phone) => phone.phone === selected) ?? list[0];

  return (
    <div class="page">
      <h2>Sandbox phones</h2>
      <Notice kind="warn">
        Sandbox: instances connect to the embedded WhatsApp simulator, not to WhatsApp. These phones are its accounts: link an instance to one, then chat with
        it from another.
      </Notice>
      <div class="grid-sidebar">
        <Card title="Phones" testid="sim-phones">
          {phones.error ? <Notice kind="error">{phones.error}</Notice> : null}
          <ul class="phone-list">
            {list.map((phone) => (
              <li>
                <button
                  type="button"
                  class={`phone-item ${current?.phone === phone.phone ? 'phone-item-on' : ''}`}
                  onClick={() => setSelected(phone.phone)}
                  data-phone={phone.phone}
                >
                  <strong>{phone.name || 'Phone'}</strong>
                  <span class="muted small">{formatPhone(phone.phone)}</span>
                </button>
              </li>
            ))}
          </ul>
          {!list.length && !phones.loading ? <p class="muted small">No phone yet.</p> : null}
          <form
            class="form-grid form-tight"
            onSubmit={(event) => {
              event.preventDefault();
              void create.run();
            }}
          >
            <Field label="New phone number">
              <input
                name="sim-phone"
                inputMode="numeric"
                placeholder="5511999990001"
                required
                value={newPhone}
                onInput={(e) => setNewPhone(e.currentTarget.value)}
              />
            </Field>
            <Field label="Name">
              <input name="sim-name" placeholder="My phone" value={newName} onInput={(e) => setNewName(e.currentTarget.value)} />
            </Field>
            <Button type="submit" busy={create.busy} disabled={newPhone.replace(/\D/g, '').length < 8}>
              Add phone
            </Button>
          </form>
          {create.error ? <Notice kind="error">{create.error}</Notice> : null}
        </Card>
        {current ? <PhoneCard key={current.phone} phone={current} instances={instances} auth={auth} phones={list} /> : <Empty>Add a phone to begin.</Empty>}
      </div>
    </div>
  );
}

function PhoneCard({
  phone,
  instances,
  auth,
  phones,
}: {
  phone: SimPhone;
  instances: Instance[];
  auth: { admin?: string; token?: string };
  phones: SimPhone[];
}) {
  const waiting = instances.filter((instance) => instance.status === 'connecting');
  const [target, setTarget] = useState('');
  const [to, setTo] = useState('');
  const [text, setText] = useState('Hi!');
  const [inbox, setInbox] = useState<InboxEntry[]>([]);
  const link = useAction(async (instance: Instance) => {
    // The freshest code: it rotates every 20 s or so.
    const { instance: fresh } = await api.call<InstanceStatusReply>('GET', '/instance/status', { token: instance.token });
    if (fresh.paircode) return api.call('POST', '/sandbox/sim/pair-code', { ...auth, body: { phone: phone.phone, code: fresh.paircode } });
    if (!fresh.qrcode) throw new Error(`${instance.name} shows no QR code right now`);
    return api.call('POST', '/sandbox/sim/scan', { ...auth, body: { phone: phone.phone, qr: fresh.qrcode } });
  });
  const send = useAction(() =>
    api.call('POST', `/sandbox/sim/accounts/${encodeURIComponent(phone.phone)}/send`, { ...auth, body: { to: to.replace(/[^\d@.a-z]/gi, ''), text } }),
  );

  useEffect(() => {
    let stopped = false;
    const read = async () => {
      try {
        const entries = await api.call<InboxEntry[]>('GET', `/sandbox/sim/accounts/${encodeURIComponent(phone.phone)}/inbox`, auth);
        if (!stopped) setInbox(entries);
      } catch {
        // shown as an empty inbox; the next read tries again
      }
    };
    void read();
    const timer = setInterval(() => void read(), 2_000);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [phone.phone]);

  const chosen = waiting.find((instance) => instance.id === target) ?? waiting[0];
  return (
    <div class="stack">
      <Card title={`${phone.name || 'Phone'} · ${formatPhone(phone.phone)}`} testid="sim-phone">
        <h4>Link an instance</h4>
        {waiting.length ? (
          <div class="inline-form">
            <select value={chosen?.id} onChange={(e) => setTarget(e.currentTarget.value)} aria-label="Instance waiting for a phone">
              {waiting.map((instance) => (
                <option value={instance.id}>{instance.name}</option>
              ))}
            </select>
            <Button variant="primary" busy={link.busy} onClick={() => chosen && void link.run(chosen)} data-testid="sim-scan">
              {chosen?.paircode ? 'Enter pairing code' : 'Scan QR code'}
            </Button>
          </div>
        ) : link.result ? null : (
          // Not after a link: the instance just linked stops waiting, and "none is waiting" beside "Linked" read as a contradiction.
          <p class="muted small">No instance is waiting for a phone: open one and press “Connect” first.</p>
        )}
        {link.result ? <Notice kind="success">Linked: the instance connects in a moment.</Notice> : null}
        {link.error ? <Notice kind="error">{link.error}</Notice> : null}
        <h4>Send a message as this phone</h4>
        <form
          class="form-grid"
          onSubmit={(event) => {
            event.preventDefault();
            void send.run();
          }}
        >
          <Field label="To">
            <input name="sim-to" list="sim-numbers" required placeholder="number or JID" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
            <datalist id="sim-numbers">
              {[...phones.map((entry) => entry.phone), ...instances.map((instance) => instance.owner).filter(Boolean)]
                .filter((value, index, all) => value !== phone.phone && all.indexOf(value) === index)
                .map((value) => (
                  <option value={value} />
                ))}
            </datalist>
          </Field>
          <Field label="Text" wide>
            <input name="sim-text" required value={text} onInput={(e) => setText(e.currentTarget.value)} />
          </Field>
          <div class="form-actions">
            <Button type="submit" busy={send.busy}>
              Send as {phone.name || 'phone'}
            </Button>
            {send.result ? <span class="ok">Sent</span> : null}
          </div>
        </form>
        {send.error ? <Notice kind="error">{send.error}</Notice> : null}
      </Card>
      <Card title="Inbox" testid="sim-inbox">
        {inbox.length ? (
          <ol class="chat">
            {[...inbox].reverse().map((entry) => (
              <li class="bubble" data-message-id={entry.id}>
                <span class="bubble-from">{formatPhone(entry.from) || entry.from}</span>
                <span class="bubble-text">{inboxText(entry)}</span>
              </li>
            ))}
          </ol>
        ) : (
          <Empty>Nothing received yet.</Empty>
        )}
      </Card>
    </div>
  );
}
