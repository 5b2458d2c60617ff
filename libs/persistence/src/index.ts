export { createDataSource, openDatabase, ENTITIES, MIGRATIONS } from './data-source';
export type { DataSourceOptions } from './data-source';
export { InstanceEntity } from './entities/instance.entity';
export type { DesiredState, ProxySettings } from './entities/instance.entity';
export type { InstanceRow } from './repositories/instance-row';
export { AuthStateRepository, FencedOutError } from './repositories/auth-state.repository';
export { databaseUnavailable } from './repositories/database-unavailable';
export type { KeyMutation } from './repositories/auth-state.repository';
export { InstanceRepository } from './repositories/instance.repository';
export type { InstancePatch } from './repositories/instance.repository';
export { SessionMoveRepository } from './repositories/session-move.repository';
export type { SessionExport, SessionImport, SessionSnapshot } from './repositories/session-move.repository';
export { LeaseRepository } from './repositories/lease.repository';
export type { TailStatement } from './pipelined-transaction';
export type { Lease } from './repositories/lease.repository';
export { GroupCommit, SLOW_STATEMENT } from './group-commit';
export type { GroupCommitOptions } from './group-commit';
export { OutboxRepository } from './repositories/outbox.repository';
export type { NewOutboxEvent, OutboxPosition, OutboxRow, SettledRead } from './repositories/outbox.repository';
export { OutboxCursorRepository } from './repositories/outbox-cursor.repository';
export type { CursorHandler, CursorStep } from './repositories/outbox-cursor.repository';
export { SettingsRepository } from './repositories/settings.repository';
export { maskUrlCredentials, SINK_KINDS, WebhookRepository } from './repositories/webhook.repository';
export type { SinkKind, WebhookRow, WebhookValues } from './repositories/webhook.repository';
export { DeliveryRepository } from './repositories/delivery.repository';
export type {
  ClaimOptions,
  DeliveredResult,
  DeliveryClaim,
  DeliveryErrorRecord,
  DirectFanOut,
  FanOutCandidate,
  FanOutResult,
  FanOutTarget,
  OutboxEvent,
} from './repositories/delivery.repository';
export { DeliveryLogRepository } from './repositories/delivery-log.repository';
export type { DeliveryLogFilter, DeliveryLogRow, DeliveryOutcome, ReplayRequest, ReplayResult } from './repositories/delivery-log.repository';
export { MessageRepository } from './repositories/message.repository';
export type { UnackedMessage } from './repositories/message.repository';
export { STATUS_RANK, toMessageRow } from './repositories/message-row';
export type { CallPeer, MessageQuery, MessageRow, NewMessage, RecordRow, StatusChange } from './repositories/message-row';
export { OutboundLedgerRepository } from './repositories/outbound-ledger.repository';
export type { Reserved } from './repositories/outbound-ledger.repository';
export { ChatRepository } from './repositories/chat.repository';
export { holdsGroupFlags, toChatRow } from './repositories/chat-row';
export { InboundGroupRepository } from './repositories/inbound-group.repository';
export type { InboundGroupResults, InboundGroupWrites, OwnCopy } from './repositories/inbound-group.repository';
export type { ChatIdentity, ChatObservation, ChatRow, ChatState, ChatTotals } from './repositories/chat-row';
export { CHAT_FIELDS, CHAT_SORT_FIELDS } from './repositories/chat-search';
export type { ChatComparison, ChatField, ChatFieldKind, ChatFilter, ChatSearch } from './repositories/chat-search';
export { ContactRepository } from './repositories/contact.repository';
export type { ContactScope } from './repositories/contact.repository';
export type { ContactObservation, ContactRow } from './repositories/contact.repository';
export { LidMappingRepository } from './repositories/lid-mapping.repository';
export type { LidMapping } from './repositories/lid-mapping.repository';
export { toMessageRecord } from './records/message.record';
export { toChatRecord } from './records/chat.record';
export { FileRepository } from './repositories/file.repository';
export type { StoredFile, StoredFileInfo } from './repositories/file.repository';
export { MAX_SIGNED_SECONDS, objectStoreFromEnv, readS3StoreConfig, S3ObjectStore } from './media/object-store';
export type { ObjectStore, S3StoreConfig } from './media/object-store';
export { SendQueueRepository } from './repositories/send-queue.repository';
export { SendLimitRepository } from './repositories/send-limit.repository';
export type { SendLimit, SendLimitKind } from './repositories/send-limit.repository';
export type { ClaimedLane, CompletedHead, LaneClaim, QueueClearResult, QueuedSend, QueueStatusRow } from './repositories/send-queue.repository';
export { CampaignExistsError, CampaignRepository, CAMPAIGN_STATUSES } from './repositories/campaign.repository';
export type { CampaignFolderRow, CampaignStatus, CampaignTick, NewCampaign } from './repositories/campaign.repository';
export { outboundMessageRow, outboundPreview } from './records/outbound-message';
export { LabelRepository, LABEL_COLORS, toLabelRecord } from './repositories/label.repository';
export type { LabelFacts, LabelRecord, LabelRow } from './repositories/label.repository';
export { BlocklistRepository } from './repositories/blocklist.repository';
export type { BlockChange, BlockedContact } from './repositories/blocklist.repository';
export { HealthRepository } from './repositories/health.repository';
export { HistorySyncRepository, type HistorySyncSummary } from './repositories/history-sync.repository';
export { MetricsRepository } from './repositories/metrics.repository';
export { AuditRepository } from './repositories/audit.repository';
export type { AuditFilter, AuditRow, NewAuditEntry } from './repositories/audit.repository';
export { RetentionRepository } from './repositories/retention.repository';
export type { DeliveryLogPurge } from './repositories/retention.repository';
export { QuickReplyRepository } from './repositories/quick-reply.repository';
export type { OverInstanceLimit, QuickReplyFileChange, QuickReplyRow, QuickReplyUpload, QuickReplyValues } from './repositories/quick-reply.repository';
export { ChatwootRepository } from './repositories/chatwoot.repository';
export type {
  ChatwootChatRow,
  ChatwootConfigRow,
  ChatwootConfigValues,
  ChatwootJob,
  ChatwootMessageLink,
  NewChatwootJob,
} from './repositories/chatwoot.repository';
export { PersistenceModule, REPOSITORIES } from './persistence.module';
export type { Database, Tx } from './tx';
export { UnitOfWork } from './unit-of-work';
export { ChatbotRepository } from './repositories/chatbot.repository';
export { ChatbotAdmissionRepository } from './repositories/chatbot-admission.repository';
export { ChatbotTranscriptRepository } from './repositories/chatbot-transcripts.repository';
export type {
  AdmissionContext,
  ChatbotChatContext,
  ChatbotChatState,
  ChatHistoryRow,
  ChatbotInstanceSettings,
  ChatbotKind,
  ChatbotRecordRow,
  ChatbotRoundRow,
  KnowledgeChunk,
  RetrievedChunk,
  RoundContext,
  RoundInput,
  RoundStatus,
} from './repositories/chatbot-rows';
