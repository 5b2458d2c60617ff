import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { relativeTime } from '../lib/format';
import type { AsyncQueueCleared, AsyncQueueStatus, Folder } from '../lib/types';
import { Button, Card, Empty, Notice, useAction, useLoad } from './kit';

const FOLDER_FILTERS = ['Active', 'Archived', 'scheduled', 'sending', 'paused', 'done', 'deleting'];

/** The async send queue and the campaigns (/sender/*) with their counters; refreshed every few seconds. */
export function QueuePanel({ token }: { token: string }) {
  const [filter, setFilter] = useState('');
  const queue = useLoad((signal) => api.call<AsyncQueueStatus>('GET', '/message/async', { token, signal }), [token]);
  const folders = useLoad(
    (signal) => api.call<Folder[]>('GET', '/sender/listfolders', { token, signal, query: { status: filter || undefined } }),
    [token, filter],
  );
  useEffect(() => {
    const timer = setInterval(() => {
      queue.reload();
      folders.reload();
    }, 5_000);
    return () => clearInterval(timer);
  }, []);
  const [armedClear, setArmedClear] = useState(false);
  const clear = useAction(async () => {
    const reply = await api.call<AsyncQueueCleared>('DELETE', '/message/async', { token });
    setArmedClear(false);
    queue.reload();
    return reply;
  });
  const edit = useAction(async (folderId: string, action: 'stop' | 'continue' | 'delete') => {
    const reply = await api.call('POST', '/sender/edit', { token, body: { folder_id: folderId, action } });
    folders.reload();
    return reply;
  });
  const state = queue.data?.queue;
  return (
    <div class="stack">
      <Card
        title="Async queue"
        testid="queue"
        actions={
          armedClear ? (
            <>
              <Button variant="danger" class="btn-small" busy={clear.busy} onClick={() => void clear.run()}>
                Cancel every queued send
              </Button>
              <Button variant="ghost" class="btn-small" onClick={() => setArmedClear(false)}>
                Keep
              </Button>
            </>
          ) : (
            <Button variant="ghost" class="btn-small" onClick={() => setArmedClear(true)} disabled={!state?.pending}>
              Clear queue…
            </Button>
          )
        }
      >
        {queue.error ? <Notice kind="error">{queue.error}</Notice> : null}
        {state ? (
          <div class="stats">
            <Stat label="Pending" value={state.pending} />
            <Stat label="State" value={state.status} />
            <Stat label="Sending now" value={state.processingNow ? 'yes' : 'no'} />
            <Stat label="Session ready" value={state.sessionReady ? 'yes' : 'no'} />
            <Stat label="Accepting" value={state.acceptingNewMessages ? 'yes' : 'no'} />
          </div>
        ) : null}
        {clear.result ? <Notice kind="success">Cleared: {JSON.stringify(clear.result.stats)}</Notice> : null}
        {clear.error ? <Notice kind="error">{clear.error}</Notice> : null}
      </Card>
      <Card
        title="Campaigns"
        testid="campaigns"
        actions={
          <select class="select-small" value={filter} onChange={(e) => setFilter(e.currentTarget.value)} aria-label="Campaign status">
            <option value="">all</option>
            {FOLDER_FILTERS.map((value) => (
              <option value={value}>{value}</option>
            ))}
          </select>
        }
      >
        {folders.error ? <Notice kind="error">{folders.error}</Notice> : null}
        {!folders.data?.length ? (
          <Empty>No campaign. Create one with POST /sender/simple or /sender/advanced.</Empty>
        ) : (
          <table class="table">
            <thead>
              <tr>
                <th>Campaign</th>
                <th>Status</th>
                <th class="num">Total</th>
                <th class="num">Sent</th>
                <th class="num">Delivered</th>
                <th class="num">Read</th>
                <th class="num">Failed</th>
                <th>Scheduled</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {folders.data.map((folder) => (
                <tr>
                  <td>
                    {folder.info || <span class="muted">(no name)</span>}
                    <div class="muted small">
                      <code>{folder.id}</code>
                    </div>
                  </td>
                  <td>
                    <span class={`pill pill-${folder.status}`}>{folder.status}</span>
                  </td>
                  <td class="num">{folder.log_total}</td>
                  <td class="num">{folder.log_sucess}</td>
                  <td class="num">{folder.log_delivered}</td>
                  <td class="num">{folder.log_read}</td>
                  <td class="num">{folder.log_failed}</td>
                  <td>{relativeTime(folder.scheduled_for) || '—'}</td>
                  <td class="actions">
                    {folder.status === 'paused' ? (
                      <Button variant="ghost" class="btn-small" onClick={() => void edit.run(folder.id, 'continue')}>
                        Continue
                      </Button>
                    ) : folder.status === 'scheduled' || folder.status === 'sending' ? (
                      <Button variant="ghost" class="btn-small" onClick={() => void edit.run(folder.id, 'stop')}>
                        Stop
                      </Button>
                    ) : null}
                    <Button variant="ghost" class="btn-small btn-danger-text" onClick={() => void edit.run(folder.id, 'delete')}>
                      Delete
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {edit.error ? <Notice kind="error">{edit.error}</Notice> : null}
      </Card>
    </div>
  );
}

function Stat({ label, value }: { label: string; value: string | number }) {
  return (
    <div class="stat">
      <span class="stat-value">{value}</span>
      <span class="stat-label">{label}</span>
    </div>
  );
}
