import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiFailure, type Credentials } from '../lib/api';
import { openEventStream } from '../lib/events';
import { applyConnectionEvent, countByStatus, filterInstances, formatPhone, STATUS_FILTERS, type StatusFilter } from '../lib/format';
import { loadCredentials, saveCredentials } from '../lib/session';
import type { Instance, InstanceStatusReply } from '../lib/types';
import { AdminSettings } from './AdminSettings';
import { CreateInstance } from './CreateInstance';
import { InstanceView } from './InstanceView';
import { Avatar, Button, Empty, Notice, StatusBadge, errorMessage } from './kit';
import { SandboxPanel } from './SandboxPanel';
import { SignIn } from './SignIn';

/** How often the instance list is read again (the open instance and the first few listed are live over SSE). */
const LIST_REFRESH_MS = 4_000;
/** How many listed instances (besides the open one) stream their status: the page keeps connections free for its API calls. */
const LIVE_LIST_STREAMS = 3;

export function App() {
  const [credentials, setCredentials] = useState<Credentials | null>(() => loadCredentials());
  // Why the console asks for a token again (a token the gateway no longer accepts), shown on the sign-in.
  const [reason, setReason] = useState('');
  const signIn = (next: Credentials | null, why = '') => {
    saveCredentials(next);
    setCredentials(next);
    setReason(why);
  };
  if (!credentials) return <SignIn onSignedIn={(next) => signIn(next)} reason={reason} />;
  return <Shell credentials={credentials} onSignOut={(why) => signIn(null, why)} onCredentials={(next) => signIn(next)} />;
}

/** The reason shown on the sign-in when the gateway stops accepting the stored token (e.g. the admin token was rotated). */
export const TOKEN_REFUSED = 'The gateway no longer accepts this token (the admin token was rotated elsewhere, or the instance was deleted): sign in again.';

type Page = { kind: 'instance'; id: string } | { kind: 'new' } | { kind: 'settings' } | { kind: 'sandbox' } | { kind: 'none' };

/** The page in the URL's hash (`#/instance/<id>`, `#/new`, `#/settings`, `#/sandbox`), so a reload or a link opens the same view. */
export function pageToHash(page: Page): string {
  if (page.kind === 'instance') return `#/instance/${encodeURIComponent(page.id)}`;
  return page.kind === 'none' ? '' : `#/${page.kind}`;
}

export function pageFromHash(hash: string): Page {
  const [kind, id] = hash.replace(/^#\/?/, '').split('/');
  if (kind === 'instance' && id) return { kind: 'instance', id: decodeURIComponent(id) };
  if (kind === 'new' || kind === 'settings' || kind === 'sandbox') return { kind };
  return { kind: 'none' };
}

function Shell({
  credentials,
  onSignOut,
  onCredentials,
}: {
  credentials: Credentials;
  onSignOut: (reason?: string) => void;
  onCredentials: (c: Credentials) => void;
}) {
  const admin = credentials.role === 'admin' ? credentials.token : undefined;
  const [instances, setInstances] = useState<Instance[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState('');
  const [page, setPage] = useState<Page>(() => pageFromHash(location.hash));
  // The view lives in the URL: each page change is a history entry (back/forward work), a reload restores it.
  useEffect(() => {
    const hash = pageToHash(page);
    if (hash !== location.hash) history.pushState(null, '', hash || `${location.pathname}${location.search}`);
  }, [page]);
  useEffect(() => {
    const follow = () => setPage(pageFromHash(location.hash));
    addEventListener('popstate', follow);
    return () => removeEventListener('popstate', follow);
  }, []);
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<StatusFilter>('all');
  const [sandbox, setSandbox] = useState(false);
  const [tick, setTick] = useState(0);
  const refresh = () => setTick((n) => n + 1);

  // The instances: all of them for the admin, the one of an instance token.
  useEffect(() => {
    let stopped = false;
    const load = async () => {
      try {
        const list = admin
          ? await api.call<Instance[]>('GET', '/instance/all', { admin })
          : [(await api.call<InstanceStatusReply>('GET', '/instance/status', { token: credentials.token })).instance];
        if (stopped) return;
        setInstances(list);
        setError('');
        setLoaded(true);
      } catch (caught) {
        if (stopped) return;
        // 401/403: the stored token is refused (rotated admin token, deleted instance): not "no instances", a new sign-in.
        if (caught instanceof ApiFailure && (caught.status === 401 || caught.status === 403)) return onSignOut(TOKEN_REFUSED);
        setError(errorMessage(caught));
      }
    };
    void load();
    const timer = setInterval(() => void load(), LIST_REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [admin, credentials.token, tick]);

  // The sandbox's phones panel, when this gateway runs with --sandbox.
  useEffect(() => {
    const auth = admin ? { admin } : { token: credentials.token };
    api
      .call('GET', '/sandbox/sim/accounts', auth)
      .then(() => setSandbox(true))
      .catch(() => setSandbox(false));
  }, [admin, credentials.token]);

  // An instance token: its one instance is the page.
  useEffect(() => {
    if (!admin && instances[0] && page.kind === 'none') setPage({ kind: 'instance', id: instances[0].id });
  }, [admin, instances, page.kind]);

  const shown = useMemo(() => filterInstances(instances, search, status), [instances, search, status]);
  const selected = page.kind === 'instance' ? instances.find((instance) => instance.id === page.id) : undefined;
  // The instance last opened: its view (and /sse stream) lives on while the settings or sandbox pages show.
  const [watchedId, setWatchedId] = useState<string | null>(null);
  useEffect(() => {
    if (page.kind === 'instance') setWatchedId(page.id);
  }, [page]);
  const watched = instances.find((instance) => instance.id === (page.kind === 'instance' ? page.id : watchedId));

  // Live status in the list: besides the open instance's own stream, the first few listed instances
  // each stream their connection events. A browser holds at most six connections to one origin, so
  // the rest of the list is only read again every few seconds (see docs/console/README.md).
  // The instance whose view is mounted (shown, or hidden behind another page) streams already.
  const openId = watched?.id ?? null;
  const watchedTokens = shown
    .filter((instance) => instance.id !== openId)
    .slice(0, LIVE_LIST_STREAMS)
    .map((instance) => instance.token);
  const watchKey = watchedTokens.join(',');
  useEffect(() => {
    const closers = watchedTokens.map((token) =>
      openEventStream(
        token,
        (event) => setInstances((list) => list.map((entry) => (entry.token === token ? applyConnectionEvent(entry, event.data) : entry))),
        () => undefined,
        EventSource,
        ['connection'],
      ),
    );
    return () => closers.forEach((close) => close());
  }, [watchKey]);
  const counts = useMemo(() => countByStatus(instances), [instances]);

  return (
    <div class="shell">
      <header class="topbar">
        <div class="brand">
          <span class="brand-mark" aria-hidden="true">
            wa
          </span>
          <span>gateway console</span>
        </div>
        <div class="topbar-right">
          <span class={`role role-${credentials.role}`} data-testid="role">
            {admin ? 'Admin' : 'Instance'}
          </span>
          <a class="toplink" href="/docs" target="_blank" rel="noreferrer">
            API docs
          </a>
          <Button variant="ghost" onClick={() => onSignOut()}>
            Sign out
          </Button>
        </div>
      </header>
      <div class="layout">
        <aside class="sidebar">
          {admin ? (
            <div class="sidebar-tools">
              <Button variant="primary" class="btn-block" onClick={() => setPage({ kind: 'new' })} data-testid="new-instance">
                + New instance
              </Button>
              <input class="search" type="search" placeholder="Search name, number, id…" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
              <div class="filters" role="group" aria-label="Filter by status">
                {STATUS_FILTERS.map((value) => (
                  <button type="button" class={`chip ${status === value ? 'chip-on' : ''}`} onClick={() => setStatus(value)} data-filter={value}>
                    {value} <span class="chip-count">{counts[value]}</span>
                  </button>
                ))}
              </div>
            </div>
          ) : null}
          <ul class="instance-list" data-testid="instance-list">
            {shown.map((instance) => (
              <li>
                <button
                  type="button"
                  class={`instance-item ${page.kind === 'instance' && page.id === instance.id ? 'instance-item-on' : ''}`}
                  onClick={() => setPage({ kind: 'instance', id: instance.id })}
                  data-instance={instance.name}
                >
                  <Avatar url={instance.profilePicUrl} name={instance.profileName || instance.name} />
                  <span class="instance-item-text">
                    <span class="instance-item-name">{instance.name}</span>
                    <span class="instance-item-sub">{instance.profileName || formatPhone(instance.owner) || instance.id}</span>
                  </span>
                  <StatusBadge status={instance.status} />
                </button>
              </li>
            ))}
          </ul>
          {loaded && admin && !shown.length ? <p class="muted small pad">{instances.length ? 'No instance matches.' : 'No instances yet.'}</p> : null}
          <nav class="sidebar-nav">
            {admin ? (
              <button type="button" class={`navlink ${page.kind === 'settings' ? 'navlink-on' : ''}`} onClick={() => setPage({ kind: 'settings' })}>
                Global settings
              </button>
            ) : null}
            {sandbox ? (
              <button
                type="button"
                class={`navlink ${page.kind === 'sandbox' ? 'navlink-on' : ''}`}
                onClick={() => setPage({ kind: 'sandbox' })}
                data-testid="sandbox-nav"
              >
                Sandbox phones
              </button>
            ) : null}
          </nav>
        </aside>
        <main class="content">
          {error ? <Notice kind="error">{error}</Notice> : null}
          {page.kind === 'new' && admin ? (
            <CreateInstance
              admin={admin}
              onCreated={(instance) => {
                setInstances((list) => [...list.filter((entry) => entry.id !== instance.id), instance]);
                setPage({ kind: 'instance', id: instance.id });
                refresh();
              }}
            />
          ) : null}
          {page.kind === 'settings' && admin ? <AdminSettings admin={admin} onRotated={(token) => onCredentials({ role: 'admin', token })} /> : null}
          {page.kind === 'sandbox' && sandbox ? <SandboxPanel credentials={credentials} instances={instances} /> : null}
          {watched ? (
            // Kept mounted (hidden) while another page shows: its event stream and monitor keep running.
            <div class={page.kind === 'instance' && page.id === watched.id ? '' : 'hidden'}>
              <InstanceView
                key={watched.id}
                instance={watched}
                admin={admin}
                sandbox={sandbox}
                onChanged={(instance) => setInstances((list) => list.map((entry) => (entry.id === instance.id ? { ...entry, ...instance } : entry)))}
                onDeleted={() => {
                  setInstances((list) => list.filter((entry) => entry.id !== watched.id));
                  setWatchedId(null);
                  if (admin) setPage({ kind: 'none' });
                  else onSignOut();
                }}
              />
            </div>
          ) : null}
          {page.kind === 'instance' && !selected && loaded ? <Empty>This instance no longer exists.</Empty> : null}
          {page.kind === 'none' && admin ? (
            <Empty>
              <h2>Instances</h2>
              <p>
                {instances.length
                  ? 'Pick an instance on the left, or create a new one.'
                  : 'No instances yet: create one, then connect it to WhatsApp with its QR code or a pairing code.'}
              </p>
              <Button variant="primary" onClick={() => setPage({ kind: 'new' })}>
                + New instance
              </Button>
            </Empty>
          ) : null}
        </main>
      </div>
    </div>
  );
}
