import type { ChatwootConfigResponse, ChatwootConfigUpdatedResponse, ChatwootWebhookAcceptedResponse } from './chatwoot.response';

/** The bodies the Chatwoot routes answer, as the OpenAPI document shows them. */
export const CHATWOOT_CONFIG_EXAMPLE: ChatwootConfigResponse = {
  chatwoot_enabled: true,
  chatwoot_url: 'https://app.chatwoot.com',
  chatwoot_account_id: 1,
  chatwoot_inbox_id: 5,
  chatwoot_access_token: 'pXXG********************',
  chatwoot_ignore_groups: false,
  chatwoot_sign_messages: true,
  chatwoot_create_new_conversation: false,
  chatwoot_inbox_webhook_url: 'https://api.example.com/chatwoot/webhook/r183e2ef9597845/cw_3N2yQx8b1RkVfP0aLm7cTe9WqZs4GhJd',
};

export const CHATWOOT_CONFIG_UPDATED_EXAMPLE: ChatwootConfigUpdatedResponse = {
  message: 'Chatwoot config updated successfully, put this URL in Chatwoot inbox webhook settings:',
  chatwoot_inbox_webhook_url: 'https://api.example.com/chatwoot/webhook/r183e2ef9597845/cw_3N2yQx8b1RkVfP0aLm7cTe9WqZs4GhJd',
};

export const CHATWOOT_WEBHOOK_ACCEPTED_EXAMPLE: ChatwootWebhookAcceptedResponse = { received: true, queued: 1 };
