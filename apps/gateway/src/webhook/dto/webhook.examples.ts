import { WEBHOOK_ERROR_EXAMPLE } from '../../common/dto/common.examples';
import type { WebhookErrorResponse } from '../../common/dto/webhook-error.response';
import type { WebhookResponse } from './webhook.response';

/** The bodies the webhook routes answer, as the OpenAPI document shows them. */
export const WEBHOOK_EXAMPLE: WebhookResponse = {
  id: 'r1a2b3c4d5e6f7a',
  enabled: true,
  url: 'https://example.com/webhook',
  events: ['messages', 'messages_update'],
  excludeMessages: ['wasSentByApi'],
  addUrlEvents: false,
  addUrlTypesMessages: false,
  includeToken: false,
  created: '2024-01-01T12:00:00.000Z',
  updated: '2024-01-01T12:00:00.000Z',
};

export const WEBHOOK_CONFIGURED_EXAMPLE: WebhookResponse[] = [{ ...WEBHOOK_EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }];

export const GLOBAL_WEBHOOK_EXAMPLE: WebhookResponse = { ...WEBHOOK_EXAMPLE, events: ['messages', 'connection'] };

export const GLOBAL_WEBHOOK_ERROR_EXAMPLE: WebhookErrorResponse = { ...WEBHOOK_ERROR_EXAMPLE, type: 'global' };
