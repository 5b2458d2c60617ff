import { useState } from 'preact/hooks';
import { relativeTime } from '../lib/format';
import type { WebhookError } from '../lib/types';
import { Empty, JsonView } from './kit';

/** Recent deliveries that failed (GET /webhook/errors, /globalwebhook/errors), newest first. */
export function WebhookErrors({ errors }: { errors: WebhookError[] }) {
  const [open, setOpen] = useState<number | null>(null);
  if (!errors.length) return <Empty>No failed delivery recorded: every event reached its webhook.</Empty>;
  return (
    <table class="table">
      <thead>
        <tr>
          <th>When</th>
          <th>Event</th>
          <th>Status</th>
          <th>Attempts</th>
          <th>Error</th>
        </tr>
      </thead>
      <tbody>
        {errors.map((entry, index) => (
          <>
            <tr class="clickable" onClick={() => setOpen(open === index ? null : index)}>
              <td title={entry.created}>{relativeTime(entry.created)}</td>
              <td>
                {entry.event}
                {entry.message_type ? <span class="muted"> · {entry.message_type}</span> : null}
              </td>
              <td>
                <span class="pill pill-bad">{entry.status_code || '—'}</span>
              </td>
              <td>{entry.attempts}</td>
              <td class="truncate" title={`${entry.url}\n${entry.error}`}>
                {entry.error}
              </td>
            </tr>
            {open === index ? (
              <tr>
                <td colSpan={5}>
                  <p class="small">
                    <code>{entry.url}</code>
                  </p>
                  <JsonView value={entry.payload ?? {}} />
                </td>
              </tr>
            ) : null}
          </>
        ))}
      </tbody>
    </table>
  );
}
