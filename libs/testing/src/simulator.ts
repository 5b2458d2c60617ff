/** A call to the WhatsApp simulator's control API (accounts, scans, inboxes); an error status throws. */
export async function simulatorControl<T>(sim: { controlUrl: string }, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${sim.controlUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const payload = (await response.json()) as T & { error?: string };
  if (!response.ok) throw new Error(`${method} ${path} → ${response.status}: ${payload.error ?? ''}`);
  return payload;
}
