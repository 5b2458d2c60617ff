import { useState } from 'preact/hooks';
import { EVENT_TYPES, EXCLUDE_MESSAGES } from '../lib/format';
import type { Webhook } from '../lib/types';
import { Button, Field } from './kit';

export interface WebhookFields {
  url: string;
  events: string[];
  excludeMessages: string[];
  enabled: boolean;
  addUrlEvents: boolean;
  addUrlTypesMessages: boolean;
}

export const blankWebhook = (): WebhookFields => ({
  url: '',
  events: ['messages', 'connection'],
  excludeMessages: ['wasSentByApi'],
  enabled: true,
  addUrlEvents: false,
  addUrlTypesMessages: false,
});

export const webhookFields = (webhook: Webhook): WebhookFields => ({
  url: webhook.url,
  events: webhook.events ?? [],
  excludeMessages: webhook.excludeMessages ?? [],
  enabled: webhook.enabled,
  addUrlEvents: webhook.addUrlEvents,
  addUrlTypesMessages: webhook.addUrlTypesMessages,
});

function toggled(list: string[], value: string): string[] {
  return list.includes(value) ? list.filter((entry) => entry !== value) : [...list, value];
}

/** A webhook's URL, events and filters: the instance's webhooks and the global one share it. */
export function WebhookForm(props: {
  initial: WebhookFields;
  submitLabel: string;
  busy: boolean;
  onSubmit: (fields: WebhookFields) => void;
  onCancel?: () => void;
}) {
  const [fields, setFields] = useState<WebhookFields>(props.initial);
  const set = (patch: Partial<WebhookFields>) => setFields((before) => ({ ...before, ...patch }));
  return (
    <form
      class="form-grid"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSubmit(fields);
      }}
    >
      <Field label="URL" hint="Where events are POSTed (https; private addresses are refused unless allowed by SSRF_ALLOWLIST)." wide>
        <input
          name="url"
          type="url"
          required
          placeholder="https://example.com/webhook"
          value={fields.url}
          onInput={(e) => set({ url: e.currentTarget.value })}
        />
      </Field>
      <fieldset class="field-wide fieldset">
        <legend>Events</legend>
        <div class="checks">
          {EVENT_TYPES.map((type) => (
            <label class="check">
              <input type="checkbox" checked={fields.events.includes(type)} onChange={() => set({ events: toggled(fields.events, type) })} /> {type}
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset class="field-wide fieldset">
        <legend>Leave out messages that are…</legend>
        <div class="checks">
          {EXCLUDE_MESSAGES.map((flag) => (
            <label class="check">
              <input
                type="checkbox"
                checked={fields.excludeMessages.includes(flag)}
                onChange={() => set({ excludeMessages: toggled(fields.excludeMessages, flag) })}
              />{' '}
              {flag}
            </label>
          ))}
        </div>
      </fieldset>
      <div class="field-wide checks">
        <label class="check">
          <input type="checkbox" checked={fields.enabled} onChange={(e) => set({ enabled: e.currentTarget.checked })} /> Enabled
        </label>
        <label class="check">
          <input type="checkbox" checked={fields.addUrlEvents} onChange={(e) => set({ addUrlEvents: e.currentTarget.checked })} /> Add the event to the URL
        </label>
        <label class="check">
          <input type="checkbox" checked={fields.addUrlTypesMessages} onChange={(e) => set({ addUrlTypesMessages: e.currentTarget.checked })} /> Add the message
          type to the URL
        </label>
      </div>
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={props.busy} disabled={!fields.url.trim() || !fields.events.length}>
          {props.submitLabel}
        </Button>
        {props.onCancel ? (
          <Button variant="ghost" onClick={props.onCancel}>
            Cancel
          </Button>
        ) : null}
      </div>
    </form>
  );
}
