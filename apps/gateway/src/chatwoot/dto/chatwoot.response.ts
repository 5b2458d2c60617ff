import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** `GET /chatwoot/config`: the reference's fields (defaults before the first PUT). */
@ApiSchema({ name: 'ChatwootConfig', description: "The instance's Chatwoot bridge, its access token masked" })
export class ChatwootConfigResponse {
  @ApiProperty({ description: 'Messages and contacts go both ways between WhatsApp and Chatwoot' })
  chatwoot_enabled!: boolean;
  @ApiProperty({ description: 'Base URL of the Chatwoot installation ("" before the first PUT)' })
  chatwoot_url!: string;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'The Chatwoot account (0 before the first PUT)' })
  chatwoot_account_id!: number;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'The API inbox of that account that holds the conversations (0 before the first PUT)' })
  chatwoot_inbox_id!: number;
  @ApiProperty({ description: 'Masked: the first 4 characters, then asterisks ("" before the first PUT)' })
  chatwoot_access_token!: string;
  @ApiProperty({ description: 'WhatsApp groups are left out of the sync' })
  chatwoot_ignore_groups!: boolean;
  @ApiProperty({ description: "Agents' messages are sent on WhatsApp signed with the agent's name" })
  chatwoot_sign_messages!: boolean;
  @ApiProperty({ description: 'A new message always opens a new conversation instead of reusing the open one' })
  chatwoot_create_new_conversation!: boolean;
  @ApiProperty({ description: 'The URL to put in the Chatwoot inbox webhook settings ("" before the first PUT)' })
  chatwoot_inbox_webhook_url!: string;
}

/** `PUT /chatwoot/config`. */
@ApiSchema({ name: 'ChatwootConfigUpdated', description: 'Saved; where Chatwoot must send the inbox webhooks' })
export class ChatwootConfigUpdatedResponse {
  @ApiProperty({ description: 'What was done, and what to do with the URL' })
  message!: string;
  @ApiProperty({ description: 'PUBLIC_BASE_URL/chatwoot/webhook/<instance>/<secret>: put it in the Chatwoot inbox webhook settings' })
  chatwoot_inbox_webhook_url!: string;
}

/** `POST /chatwoot/webhook/{instance}/{secret}`. */
@ApiSchema({ name: 'ChatwootWebhookAccepted', description: 'The webhook was taken (its work is durable)' })
export class ChatwootWebhookAcceptedResponse {
  @ApiProperty({ description: 'Always true: the webhook was taken' })
  received!: boolean;
  @ApiProperty({ type: 'integer', description: 'How many messages it queued for WhatsApp (0 when the bridge is off or for a redelivery)' })
  queued!: number;
}
