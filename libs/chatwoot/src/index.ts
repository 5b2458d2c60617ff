export { ChatwootClient, ChatwootError } from './chatwoot-client';
export type { ChatwootAccount, ChatwootAttachmentUpload, ChatwootContact, ChatwootConversation, ChatwootMessage, NewChatwootMessage } from './chatwoot-client';
export { intakeOfWebhook, JobKind, jobsOfEvents, lidsOfEvents, revokeIdsOf, SOURCE_PREFIX, sourceIdOf, whatsappIdsOf } from './chatwoot-jobs';
export type { ChatwootAttachmentRef, WebhookIntake } from './chatwoot-jobs';
export { CHATWOOT_SYNC_DEFAULTS, ChatwootSync } from './chatwoot-sync';
export type { ChatwootSyncConfig } from './chatwoot-sync';
export { readChatwootSyncConfig } from './chatwoot-config';
export { ChatwootSyncModule } from './chatwoot.module';
