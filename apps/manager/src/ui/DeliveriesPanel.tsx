import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { relativeTime } from '../lib/format';
import type { Delivery, DeliveryPage, ReplayResult } from '../lib/types';
import { Button, Card, Empty, Notice, useAction, useLoad } from './kit';

const OUTCOMES = ['delivered', 'failed', 'retrying', 'pending'] as const;
const OUTCOME_PILL: Record<string, string> = { delivered: 'pill-good', failed: 'pill-bad', retrying: 'pill-paused', pending: 'pill-sending' };

/** `datetime-local` input values (local time) as ISO instants; '' stays ''. */
const instant = (value: string) => (value ? new Date(value).toISOString() : '');

/**
 * The instance's delivery log (GET /webhook/deliveries: its webhooks and sinks, newest events first)
 * with its filters and pages, and replay (POST /webhook/replay): one delivery again, or every event
 * of a time window to every enabled target.
 */
export function DeliveriesPanel({ token }: { token: string }) {
  const [outcome, setOutcome] = useState('');
  const [eventType, setEventType] = useState('');
  const [more, setMore] = useState<Delivery[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const page = useLoad(
    async (signal) => {
      const reply = await api.call<DeliveryPage>('GET', '/webhook/deliveries', { token, signal, query: { outcome, eventType: eventType.trim() } });
      setMore([]);
      setCursor(reply.next_cursor);
      return reply;
    },
    [token, outcome, eventType],
  );
  const loadMore = useAction(async () => {
    const reply = await api.call<DeliveryPage>('GET', '/webhook/deliveries', { token, query: { outcome, eventType: eventType.trim(), cursor: cursor ?? '' } });
    setMore((list) => [...list, ...reply.deliveries]);
    setCursor(reply.next_cursor);
  });
  const replay = useAction(async (body: Record<string, unknown>) => {
    const result = await api.call<ReplayResult>('POST', '/webhook/replay', { token, body });
    page.reload();
    return result;
  });
  const rows = [...(page.data?.deliveries ?? []), ...more];
  return (
    <div class="stack">
      <Card
        title="Deliveries"
        testid="deliveries"
        actions={
          <Button variant="ghost" class="btn-small" onClick={page.reload}>
            Refresh
          </Button>
        }
      >
        <div class="filters">
          <select class="select-small" value={outcome} onChange={(e) => setOutcome(e.currentTarget.value)} aria-label="Outcome">
            <option value="">every outcome</option>
            {OUTCOMES.map((value) => (
              <option value={value}>{value}</option>
            ))}
          </select>
          <input
            class="select-small"
            name="eventType"
            placeholder="event type (messages…)"
            value={eventType}
            onChange={(e) => setEventType(e.currentTarget.value)}
            aria-label="Event type"
          />
        </div>
        {page.error ? <Notice kind="error">{page.error}</Notice> : null}
        {replay.result ? (
          <Notice kind="success">
            Replay queued {replay.result.queued}
            {replay.result.pending ? ` · ${replay.result.pending} still pending` : ''}
            {replay.result.unavailable ? ` · ${replay.result.unavailable} past the outbox's retention` : ''}
          </Notice>
        ) : null}
        {replay.error ? <Notice kind="error">{replay.error}</Notice> : null}
        {!rows.length && !page.loading ? (
          <Empty>No delivery recorded: add a webhook or a sink, and its deliveries show here.</Empty>
        ) : (
          <table class="table" data-testid="delivery-rows">
            <thead>
              <tr>
                <th>Event</th>
                <th>Target</th>
                <th>Outcome</th>
                <th class="num">Attempts</th>
                <th class="num">Status</th>
                <th class="num">Latency</th>
                <th>Last try</th>
                <th>Error</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr data-delivery={row.id}>
                  <td>
                    {row.event_type}
                    <div class="muted small">
                      <code>{row.event_id}</code>
                    </div>
                  </td>
                  <td>
                    <code>{row.webhook_id ?? row.sink_id}</code>
                    <div class="muted small">{row.kind}</div>
                  </td>
                  <td>
                    <span class={`pill ${OUTCOME_PILL[row.outcome] ?? ''}`}>{row.outcome}</span>
                    {row.replayed ? (
                      <span class="pill" title={`replayed ${row.replayed_at ?? ''} by ${row.replayed_by ?? ''}`}>
                        replay
                      </span>
                    ) : null}
                  </td>
                  <td class="num">{row.attempts}</td>
                  <td class="num">{row.last_status_code ?? '—'}</td>
                  <td class="num">{row.latency_ms === null ? '—' : `${row.latency_ms} ms`}</td>
                  <td title={row.last_attempt_at ?? ''}>
                    {row.last_attempt_at ? relativeTime(row.last_attempt_at) : '—'}
                    {row.next_attempt_at && row.attempts > 0 ? <div class="muted small">next {relativeTime(row.next_attempt_at)}</div> : null}
                  </td>
                  <td class="truncate" title={row.error}>
                    {row.error}
                  </td>
                  <td class="actions">
                    <Button
                      variant="ghost"
                      class="btn-small"
                      busy={replay.busy}
                      onClick={() =>
                        void replay.run({ ...(row.webhook_id ? { webhookId: row.webhook_id } : { sinkId: row.sink_id }), eventIds: [row.event_id] })
                      }
                    >
                      Replay
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {cursor ? (
          <Button variant="ghost" class="btn-small" busy={loadMore.busy} onClick={() => void loadMore.run()}>
            Older deliveries
          </Button>
        ) : null}
      </Card>
      <Card title="Replay a time window">
        <p class="muted small">
          Every event of the window (at most 7 days) goes again to every enabled webhook and sink that takes it, paced like any delivery and with its original
          webhook-id, so receivers can drop what they already have.
        </p>
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void replay.run({ from: instant(from), to: instant(to) });
          }}
        >
          <input type="datetime-local" name="replayFrom" value={from} onChange={(e) => setFrom(e.currentTarget.value)} aria-label="From" required />
          <input type="datetime-local" name="replayTo" value={to} onChange={(e) => setTo(e.currentTarget.value)} aria-label="To" required />
          <Button variant="secondary" type="submit" busy={replay.busy}>
            Replay window
          </Button>
        </form>
      </Card>
    </div>
  );
}
