import { useState } from 'preact/hooks';
import { api, type Credentials } from '../lib/api';
import { Button, Notice, errorMessage } from './kit';

export function SignIn({ onSignedIn, reason = '' }: { onSignedIn: (credentials: Credentials) => void; reason?: string }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      const role = await api.identify(token);
      onSignedIn({ role, token: token.trim() });
    } catch (caught) {
      setError(errorMessage(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <form class="signin-card" onSubmit={submit}>
        <div class="brand brand-large">
          <span class="brand-mark" aria-hidden="true">
            wa
          </span>
          <span>gateway console</span>
        </div>
        {reason ? (
          <div data-testid="signin-reason">
            <Notice kind="warn">{reason}</Notice>
          </div>
        ) : null}
        <p class="muted">Sign in with the admin token to manage every instance, or with an instance token to manage that instance only.</p>
        <label class="field">
          <span class="field-label">Token</span>
          <input
            name="token"
            type="password"
            autoComplete="off"
            spellcheck={false}
            placeholder="admin token or instance token"
            value={token}
            onInput={(event) => {
              setToken(event.currentTarget.value);
              setError('');
            }}
            autoFocus
          />
        </label>
        {error ? <Notice kind="error">{error}</Notice> : null}
        <Button type="submit" variant="primary" busy={busy} class="btn-block">
          Sign in
        </Button>
        <p class="muted small">
          The token stays in this tab only (sessionStorage). Lost the admin token? <code>npm run -s admin-token</code> prints a new one (
          <code>npm run -s admin-token -- --sandbox</code> for <code>npm run sandbox</code>).
        </p>
      </form>
    </main>
  );
}
