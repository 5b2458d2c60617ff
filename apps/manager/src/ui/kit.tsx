import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../lib/api';
import { maskToken } from '../lib/format';

export function Button(props: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: 'primary' | 'secondary' | 'danger' | 'ghost'; busy?: boolean }) {
  const { variant = 'secondary', busy, children, class: className, disabled, ...rest } = props;
  return (
    <button type="button" {...rest} class={`btn btn-${variant} ${className ?? ''}`} disabled={Boolean(disabled) || busy}>
      {busy ? <span class="spinner" aria-hidden="true" /> : null}
      {children}
    </button>
  );
}

export function Card(props: { title?: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren; class?: string; testid?: string }) {
  return (
    <section class={`card ${props.class ?? ''}`} data-testid={props.testid}>
      {props.title || props.actions ? (
        <header class="card-head">
          <h3>{props.title}</h3>
          <div class="card-actions">{props.actions}</div>
        </header>
      ) : null}
      <div class="card-body">{props.children}</div>
    </section>
  );
}

export function Field(props: { label: string; hint?: ComponentChildren; children: ComponentChildren; wide?: boolean }) {
  return (
    <label class={`field ${props.wide ? 'field-wide' : ''}`}>
      <span class="field-label">{props.label}</span>
      {props.children}
      {props.hint ? <span class="field-hint">{props.hint}</span> : null}
    </label>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return (
    <span class={`badge badge-${status}`} data-testid="status">
      <span class="dot" aria-hidden="true" />
      {status || 'unknown'}
    </span>
  );
}

export function Notice({ kind = 'info', children }: { kind?: 'info' | 'error' | 'success' | 'warn'; children: ComponentChildren }) {
  return (
    <div class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function JsonView({ value, compact }: { value: unknown; compact?: boolean }) {
  return <pre class={`json ${compact ? 'json-compact' : ''}`}>{JSON.stringify(value, null, 2)}</pre>;
}

/** Copies text; on plain http (no Clipboard API outside secure contexts) through a hidden textarea. */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.appendChild(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 1500);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <Button
      variant="ghost"
      class="btn-small"
      onClick={() => {
        void copyText(text).then(() => setCopied(true));
      }}
    >
      {copied ? 'Copied' : label}
    </Button>
  );
}

/** A secret shown masked, with Show and Copy. */
export function SecretValue({ value, testid }: { value: string; testid?: string }) {
  const [shown, setShown] = useState(false);
  return (
    <span class="secret" data-testid={testid}>
      <code>{shown ? value : maskToken(value)}</code>
      <Button variant="ghost" class="btn-small" onClick={() => setShown(!shown)}>
        {shown ? 'Hide' : 'Show'}
      </Button>
      <CopyButton text={value} />
    </span>
  );
}

export function Tabs<T extends string>(props: { tabs: Array<[T, string]>; current: T; onChange: (tab: T) => void }) {
  return (
    <nav class="tabs" role="tablist">
      {props.tabs.map(([id, label]) => (
        <button
          type="button"
          role="tab"
          aria-selected={props.current === id}
          class={`tab ${props.current === id ? 'tab-active' : ''}`}
          onClick={() => props.onChange(id)}
        >
          {label}
        </button>
      ))}
    </nav>
  );
}

export function errorMessage(error: unknown): string {
  if (error instanceof ApiFailure) return error.status ? `${error.message} (HTTP ${error.status})` : error.message;
  return (error as Error)?.message ?? String(error);
}

/** Runs an action, keeping its busy flag, error and last result for the form that started it. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [result, setResult] = useState<R | undefined>(undefined);
  const latest = useRef(action);
  latest.current = action;
  const run = useCallback(async (...args: A): Promise<R | undefined> => {
    setBusy(true);
    setError('');
    setResult(undefined);
    try {
      const value = await latest.current(...args);
      setResult(value);
      return value;
    } catch (caught) {
      setError(errorMessage(caught));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { run, busy, error, result, setError, setResult };
}

/** Loads data on mount and when `deps` change; `reload` loads again. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    load(controller.signal)
      .then((value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError('');
      })
      .catch((caught: unknown) => {
        if (controller.signal.aborted) return;
        setError(errorMessage(caught));
      })
      .finally(() => {
        if (!controller.signal.aborted) setLoading(false);
      });
    return () => controller.abort();
  }, [...deps, tick]);
  return { data, error, loading, reload: () => setTick((n) => n + 1), setData };
}

export function Avatar({ url, name }: { url?: string; name: string }) {
  const [failed, setFailed] = useState(false);
  const initials = (name || '?')
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((word) => word[0]?.toUpperCase())
    .join('');
  if (url && !failed) return <img class="avatar" src={url} alt="" referrerpolicy="no-referrer" onError={() => setFailed(true)} />;
  return (
    <span class="avatar avatar-initials" aria-hidden="true">
      {initials || '?'}
    </span>
  );
}

/**
 * A settings form: its fields, a submit button showing the action's busy state and "Saved" once it
 * succeeded, and the action's error under the form.
 */
export function SettingsForm(props: {
  action: { run: () => Promise<unknown>; busy: boolean; error: string; result: unknown };
  submitLabel?: string;
  disabled?: boolean;
  children: ComponentChildren;
}) {
  const { action } = props;
  return (
    <>
      <form
        class="form-grid"
        onSubmit={(event) => {
          event.preventDefault();
          void action.run();
        }}
      >
        {props.children}
        <div class="form-actions">
          <Button type="submit" busy={action.busy} disabled={props.disabled}>
            {props.submitLabel ?? 'Save'}
          </Button>
          {action.result ? <span class="ok">Saved</span> : null}
        </div>
      </form>
      {action.error ? <Notice kind="error">{action.error}</Notice> : null}
    </>
  );
}
