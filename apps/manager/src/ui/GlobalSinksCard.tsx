import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { Button, Card, Empty, Notice, useAction, useLoad } from './kit';
import { FailedDeliveries, SinkForm, SinkRow, sinkErrors, type Kind, type Sink } from './SinksCard';

/** The admin's global sinks (/globalsink/{kind}): one per broker kind, every instance's events. */
export function GlobalSinksCard({ admin }: { admin: string }) {
  // One list (an empty one when none is set): GET /globalsink/{kind} answers 404 for an unset kind, which the browser logs as an error.
  const sinks = useLoad((signal) => api.call<Sink[]>('GET', '/globalsink', { admin, signal }), [admin]);
  const errors = useLoad((signal) => sinkErrors('/globalsink', { admin, signal }), [admin]);
  const [editing, setEditing] = useState(false);
  const save = useAction(async (kind: Kind, body: Record<string, unknown>) => {
    await api.call('POST', `/globalsink/${kind}`, { admin, body });
    setEditing(false);
    sinks.reload();
  });
  const remove = useAction(async (kind: Kind) => {
    await api.call('DELETE', `/globalsink/${kind}`, { admin });
    sinks.reload();
  });
  return (
    <Card
      title="Global event sinks"
      testid="global-sinks"
      actions={
        editing ? null : (
          <Button variant="primary" class="btn-small" onClick={() => setEditing(true)}>
            Set a sink
          </Button>
        )
      }
    >
      <p class="muted small">Every instance's events to RabbitMQ, NATS JetStream or Kafka: one sink per kind (setting one replaces it).</p>
      {sinks.error ? <Notice kind="error">{sinks.error}</Notice> : null}
      {editing ? (
        <SinkForm busy={save.busy} submitLabel="Set global sink" onSave={(kind, body) => void save.run(kind, body)} onCancel={() => setEditing(false)} />
      ) : null}
      {!sinks.data?.length && !editing && !sinks.loading ? <Empty>No global sink.</Empty> : null}
      <ul class="rows">
        {(sinks.data ?? []).map((sink) => (
          <SinkRow sink={sink}>
            <Button variant="ghost" class="btn-small btn-danger-text" busy={remove.busy} onClick={() => void remove.run(sink.kind)}>
              Remove
            </Button>
          </SinkRow>
        ))}
      </ul>
      {save.error || remove.error ? <Notice kind="error">{save.error || remove.error}</Notice> : null}
      <FailedDeliveries errors={errors.data} />
    </Card>
  );
}
