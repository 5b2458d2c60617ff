import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, type CallOptions } from '../lib/api';
import { EVENT_TYPES } from '../lib/format';
import type { Sink, WebhookError } from '../lib/types';
import { Button, Card, Empty, Field, Notice, useAction, useLoad } from './kit';
import { WebhookErrors } from './WebhookErrors';

export type Kind = 'rabbitmq' | 'nats' | 'kafka';
export const KINDS: Array<[Kind, string, string]> = [
  ['rabbitmq', 'RabbitMQ', 'amqp://user:password@rabbit.example:5672/'],
  ['nats', 'NATS JetStream', 'nats://nats.example:4222'],
  ['kafka', 'Kafka', 'kafka://k1.example:9092,k2.example:9092'],
];
/** Each kind's own settings: [field, label, placeholder]. */
export const OPTIONS: Record<Kind, Array<[string, string, string]>> = {
  rabbitmq: [
    ['exchange', 'Exchange', 'wa-gateway'],
    ['exchangeType', 'Exchange type', 'topic'],
    ['routingKey', 'Routing key', '{instance}.{event}'],
  ],
  nats: [
    ['subjectPrefix', 'Subject prefix', 'wa-gateway.events'],
    ['stream', 'Stream', 'WA_GATEWAY_EVENTS'],
  ],
  kafka: [['topic', 'Topic', 'wa-gateway-events']],
};

export type { Sink };

/** The instance's event sinks (/sink/rabbitmq, /sink/nats, /sink/kafka): the same events as its webhooks, to a broker. */
export function SinksCard({ token }: { token: string }) {
  const sinks = useLoad(
    async (signal) => (await Promise.all(KINDS.map(([kind]) => api.call<Sink[]>('GET', `/sink/${kind}`, { token, signal })))).flat(),
    [token],
  );
  const errors = useLoad((signal) => sinkErrors('/sink', { token, signal }), [token]);
  const [adding, setAdding] = useState(false);
  const save = useAction(async (kind: Kind, body: Record<string, unknown>) => {
    await api.call('POST', `/sink/${kind}`, { token, body });
    setAdding(false);
    sinks.reload();
  });
  return (
    <Card
      title="Event sinks"
      testid="sinks"
      actions={
        adding ? null : (
          <Button variant="primary" class="btn-small" onClick={() => setAdding(true)}>
            + Add sink
          </Button>
        )
      }
    >
      {sinks.error ? <Notice kind="error">{sinks.error}</Notice> : null}
      {adding ? <SinkForm busy={save.busy} onSave={(kind, body) => void save.run(kind, { action: 'add', ...body })} onCancel={() => setAdding(false)} /> : null}
      {!sinks.data?.length && !adding && !sinks.loading ? <Empty>No sink: events can also go to RabbitMQ, NATS JetStream or Kafka.</Empty> : null}
      <ul class="rows">
        {(sinks.data ?? []).map((sink) => (
          <SinkRow sink={sink}>
            <Button variant="ghost" class="btn-small" onClick={() => void save.run(sink.kind, { action: 'update', id: sink.id, enabled: !sink.enabled })}>
              {sink.enabled ? 'Disable' : 'Enable'}
            </Button>
            <Button variant="ghost" class="btn-small btn-danger-text" onClick={() => void save.run(sink.kind, { action: 'delete', id: sink.id })}>
              Delete
            </Button>
          </SinkRow>
        ))}
      </ul>
      {save.error ? <Notice kind="error">{save.error}</Notice> : null}
      <FailedDeliveries errors={errors.data} />
    </Card>
  );
}

/** Every kind's failed deliveries under `base` (`/sink` for an instance's, `/globalsink` for the admin's), newest first. */
export async function sinkErrors(base: string, options: CallOptions): Promise<WebhookError[]> {
  const lists = await Promise.all(KINDS.map(([kind]) => api.call<WebhookError[]>('GET', `${base}/${kind}/errors`, options)));
  return lists.flat().sort((a, b) => b.created.localeCompare(a.created));
}

/** One sink in a list: on or off, its broker, URL, events and options; `children` are its buttons. */
export function SinkRow({ sink, children }: { sink: Sink; children: ComponentChildren }) {
  // Each kind's own settings (exchange, topic…), read by name.
  const options: Record<string, unknown> = sink;
  return (
    <li class="row-card row-line">
      <span class={`pill ${sink.enabled ? 'pill-good' : ''}`}>{sink.enabled ? 'on' : 'off'}</span>
      <div class="grow">
        <strong>{KINDS.find(([kind]) => kind === sink.kind)?.[1] ?? sink.kind}</strong> <code class="break">{sink.url}</code>
        <div class="muted small">
          {sink.events.join(', ')}
          {OPTIONS[sink.kind]?.map(([field, label]) => (options[field] ? ` · ${label.toLowerCase()} ${String(options[field])}` : '')).join('')}
        </div>
      </div>
      {children}
    </li>
  );
}

export function FailedDeliveries({ errors }: { errors: WebhookError[] | undefined }) {
  return errors?.length ? (
    <>
      <h4>Failed deliveries</h4>
      <WebhookErrors errors={errors} />
    </>
  ) : null;
}

export function SinkForm(props: { busy: boolean; submitLabel?: string; onSave: (kind: Kind, body: Record<string, unknown>) => void; onCancel: () => void }) {
  const [kind, setKind] = useState<Kind>('rabbitmq');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['messages', 'connection']);
  const [options, setOptions] = useState<Record<string, string>>({});
  return (
    <form
      class="form-grid row-card"
      onSubmit={(event) => {
        event.preventDefault();
        const chosen = Object.fromEntries(OPTIONS[kind].map(([field]) => [field, options[field]]).filter(([, value]) => value));
        props.onSave(kind, { url, events, ...chosen });
      }}
    >
      <Field label="Broker">
        <select value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
          {KINDS.map(([value, label]) => (
            <option value={value}>{label}</option>
          ))}
        </select>
      </Field>
      <Field label="URL" hint="Its password is stored, never shown again." wide>
        <input name="sink-url" required placeholder={KINDS.find(([value]) => value === kind)?.[2]} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      </Field>
      {OPTIONS[kind].map(([field, label, placeholder]) => (
        <Field label={label}>
          <input placeholder={placeholder} value={options[field] ?? ''} onInput={(e) => setOptions({ ...options, [field]: e.currentTarget.value })} />
        </Field>
      ))}
      <fieldset class="field-wide fieldset">
        <legend>Events</legend>
        <div class="checks">
          {EVENT_TYPES.map((type) => (
            <label class="check">
              <input
                type="checkbox"
                checked={events.includes(type)}
                onChange={() => setEvents(events.includes(type) ? events.filter((entry) => entry !== type) : [...events, type])}
              />{' '}
              {type}
            </label>
          ))}
        </div>
      </fieldset>
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={props.busy} disabled={!url.trim() || !events.length}>
          {props.submitLabel ?? 'Add sink'}
        </Button>
        <Button variant="ghost" onClick={props.onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
