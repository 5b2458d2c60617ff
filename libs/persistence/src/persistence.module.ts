import { type DynamicModule, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuditRepository } from './repositories/audit.repository';
import { AuthStateRepository } from './repositories/auth-state.repository';
import { BlocklistRepository } from './repositories/blocklist.repository';
import { CampaignRepository } from './repositories/campaign.repository';
import { ChatbotRepository } from './repositories/chatbot.repository';
import { ChatbotAdmissionRepository } from './repositories/chatbot-admission.repository';
import { ChatbotTranscriptRepository } from './repositories/chatbot-transcripts.repository';
import { ChatRepository } from './repositories/chat.repository';
import { ChatwootRepository } from './repositories/chatwoot.repository';
import { ContactRepository } from './repositories/contact.repository';
import { DeliveryRepository } from './repositories/delivery.repository';
import { DeliveryLogRepository } from './repositories/delivery-log.repository';
import { FileRepository } from './repositories/file.repository';
import { HealthRepository } from './repositories/health.repository';
import { HistorySyncRepository } from './repositories/history-sync.repository';
import { InboundGroupRepository } from './repositories/inbound-group.repository';
import { InstanceRepository } from './repositories/instance.repository';
import { LabelRepository } from './repositories/label.repository';
import { LeaseRepository } from './repositories/lease.repository';
import { LidMappingRepository } from './repositories/lid-mapping.repository';
import { MessageRepository } from './repositories/message.repository';
import { MetricsRepository } from './repositories/metrics.repository';
import { OutboundLedgerRepository } from './repositories/outbound-ledger.repository';
import { OutboxRepository } from './repositories/outbox.repository';
import { OutboxCursorRepository } from './repositories/outbox-cursor.repository';
import { QuickReplyRepository } from './repositories/quick-reply.repository';
import { RetentionRepository } from './repositories/retention.repository';
import { SendLimitRepository } from './repositories/send-limit.repository';
import { SendQueueRepository } from './repositories/send-queue.repository';
import { SessionMoveRepository } from './repositories/session-move.repository';
import { SettingsRepository } from './repositories/settings.repository';
import { WebhookRepository } from './repositories/webhook.repository';
import { dataSourceOf, type Database } from './tx';
import { UnitOfWork } from './unit-of-work';

/** Every repository: each one is built from the DataSource alone and holds no other state. */
export const REPOSITORIES = [
  AuditRepository,
  AuthStateRepository,
  BlocklistRepository,
  CampaignRepository,
  ChatRepository,
  ChatbotRepository,
  ChatbotAdmissionRepository,
  ChatbotTranscriptRepository,
  ChatwootRepository,
  ContactRepository,
  DeliveryRepository,
  DeliveryLogRepository,
  FileRepository,
  HealthRepository,
  HistorySyncRepository,
  InboundGroupRepository,
  InstanceRepository,
  LabelRepository,
  LeaseRepository,
  LidMappingRepository,
  MessageRepository,
  MetricsRepository,
  OutboundLedgerRepository,
  OutboxCursorRepository,
  OutboxRepository,
  QuickReplyRepository,
  RetentionRepository,
  SendLimitRepository,
  SendQueueRepository,
  SessionMoveRepository,
  SettingsRepository,
  WebhookRepository,
] as const;

/**
 * The repositories as Nest providers, one of each per process, injected by class:
 * `constructor(private readonly instances: InstanceRepository)`. The embedder opens (and closes) the
 * DataSource and registers this module once; it is global, so every feature module of the process
 * (the gateway's, and the dispatcher's, relay's and session worker's when they run embedded) gets the
 * same instances. A service that spans a transaction over several repositories injects `UnitOfWork`
 * (ADR 0036); the DataSource itself is still provided, for the runtimes that open and close it.
 */
@Module({})
export class PersistenceModule {
  static forDataSource(database: Database): DynamicModule {
    const dataSource = dataSourceOf(database);
    return {
      module: PersistenceModule,
      global: true,
      providers: [
        { provide: DataSource, useValue: dataSource },
        ...REPOSITORIES.map((repository) => ({ provide: repository, useFactory: (source: DataSource) => new repository(source), inject: [DataSource] })),
        { provide: UnitOfWork, useFactory: (source: DataSource) => new UnitOfWork(source), inject: [DataSource] },
      ],
      exports: [DataSource, UnitOfWork, ...REPOSITORIES],
    };
  }
}
