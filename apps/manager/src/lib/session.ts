import type { Credentials, Role } from './api';

const KEY = 'wa-gateway.console.credentials';

/** The signed-in token lives in sessionStorage: gone when the tab closes, never in localStorage or a cookie. */
export function loadCredentials(storage: Pick<Storage, 'getItem'> = sessionStorage): Credentials | null {
  try {
    const parsed = JSON.parse(storage.getItem(KEY) ?? 'null') as Partial<Credentials> | null;
    if (!parsed || typeof parsed.token !== 'string' || !parsed.token) return null;
    if (parsed.role !== 'admin' && parsed.role !== 'instance') return null;
    return { role: parsed.role as Role, token: parsed.token };
  } catch {
    return null;
  }
}

export function saveCredentials(credentials: Credentials | null, storage: Pick<Storage, 'setItem' | 'removeItem'> = sessionStorage): void {
  if (credentials) storage.setItem(KEY, JSON.stringify(credentials));
  else storage.removeItem(KEY);
}
