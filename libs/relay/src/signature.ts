import { createHmac, randomBytes } from 'node:crypto';

/** `whsec_` + base64 of 24 random bytes, as Standard Webhooks receivers expect. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The Standard Webhooks headers for exactly these body bytes. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': `v1,${signature}` };
}
