import { DataSource, MigrationExecutor } from 'typeorm';
import { compressDocumentsWithLz4 } from './document-compression';
import { PreparingClient } from './preparing-client';
import { AuthCredsEntity, AuthKeyEntity } from './entities/auth-state.entity';
import { InstanceEntity } from './entities/instance.entity';
import { SessionLeaseEntity, SessionWorkerEntity } from './entities/lease.entity';
import { OutboxEventEntity } from './entities/outbox.entity';
import { SettingEntity } from './entities/setting.entity';
import { InitialSchema1763760000000 } from './migrations/1763760000000-initial-schema';
import { Webhooks1763780000000 } from './migrations/1763780000000-webhooks';
import { MessagesChats1763790000000 } from './migrations/1763790000000-messages-chats';
import { Outbound1763800000000 } from './migrations/1763800000000-outbound';
import { SendQueue1763810000000 } from './migrations/1763810000000-send-queue';
import { Campaigns1763825000000 } from './migrations/1763825000000-campaigns';
import { DeliveryLanes1763840000000 } from './migrations/1763840000000-delivery-lanes';
import { LabelsBlocklist1763850000000 } from './migrations/1763850000000-labels-blocklist';
import { MessagesStatusIndex1763870000000 } from './migrations/1763870000000-messages-status-index';
import { MessageCallPeerAiMetadata1763895000000 } from './migrations/1763895000000-message-call-peer-ai-metadata';
import { OutboxCommitOrder1763900000000 } from './migrations/1763900000000-outbox-commit-order';
import { LeaseTokenKey1763910000000 } from './migrations/1763910000000-lease-token-key';
import { DeliveryFillfactor1763920000000 } from './migrations/1763920000000-delivery-fillfactor';
import { QuickReplies1763950029387 } from './migrations/1763950029387-quick-replies';
import { QuickRepliesWhatsapp1764120000000 } from './migrations/1764120000000-quick-replies-whatsapp';
import { Chatwoot1764140000000 } from './migrations/1764140000000-chatwoot';
import { ChatwootContactLock1764200000000 } from './migrations/1764200000000-chatwoot-contact-lock';
import { ChatbotTranscripts1764320000000 } from './migrations/1764320000000-chatbot-transcripts';
import { ContactsLidIndex1764360000000 } from './migrations/1764360000000-contacts-lid-index';
import { MessagesChatLidIndex1764410000000 } from './migrations/1764410000000-messages-chat-lid-index';
import { MessagesUnresolvedSenderIndex1764440000000 } from './migrations/1764440000000-messages-unresolved-sender-index';
import { SendLimits1764430000000 } from './migrations/1764430000000-send-limits';
import { AuditLog1764450000000 } from './migrations/1764450000000-audit-log';
import { DeliveryLog1764460000000 } from './migrations/1764460000000-delivery-log';
import { OutboxTraceparent1764480000000 } from './migrations/1764480000000-outbox-traceparent';
import { InstanceExported1764470000000 } from './migrations/1764470000000-instance-exported';
import { MessagesFreshTakenId1764490000000 } from './migrations/1764490000000-messages-fresh-taken-id';
import { AuthKeysWrittenAt1764500000000 } from './migrations/1764500000000-auth-keys-written-at';
import { UnackedSends1764510000000 } from './migrations/1764510000000-unacked-sends';
import { UnackedSendsSeed1764510000001 } from './migrations/1764510000001-unacked-sends-seed';
import { SendQueueByMessage1764520000000 } from './migrations/1764520000000-send-queue-by-message';
import { MessagesCalls1764530000000 } from './migrations/1764530000000-messages-calls';
import { InstanceDeviceLists1764540000000 } from './migrations/1764540000000-instance-device-lists';
import { OutboxCursorPending1764400000000 } from './migrations/1764400000000-outbox-cursor-pending';
import { Chatbot1764130000000 } from './migrations/1764130000000-chatbot';
import { OutboxCursors1764090000000 } from './migrations/1764090000000-outbox-cursors';
import { EventSinks1764160000000 } from './migrations/1764160000000-event-sinks';
import { MediaStore1764160000001 } from './migrations/1764160000001-media-store';
import { MediaObjectDeletions1764160000002 } from './migrations/1764160000002-media-object-deletions';
import { ChatMarkedUnread1764190000000 } from './migrations/1764190000000-chat-marked-unread';

export const ENTITIES = [InstanceEntity, AuthCredsEntity, AuthKeyEntity, SessionLeaseEntity, SessionWorkerEntity, SettingEntity, OutboxEventEntity];
export const MIGRATIONS = [
  InitialSchema1763760000000,
  Webhooks1763780000000,
  MessagesChats1763790000000,
  Outbound1763800000000,
  SendQueue1763810000000,
  Campaigns1763825000000,
  DeliveryLanes1763840000000,
  LabelsBlocklist1763850000000,
  MessagesStatusIndex1763870000000,
  MessageCallPeerAiMetadata1763895000000,
  OutboxCommitOrder1763900000000,
  LeaseTokenKey1763910000000,
  DeliveryFillfactor1763920000000,
  QuickReplies1763950029387,
  QuickRepliesWhatsapp1764120000000,
  Chatbot1764130000000,
  OutboxCursors1764090000000,
  Chatwoot1764140000000,
  EventSinks1764160000000,
  MediaStore1764160000001,
  MediaObjectDeletions1764160000002,
  ChatMarkedUnread1764190000000,
  ChatwootContactLock1764200000000,
  ChatbotTranscripts1764320000000,
  ContactsLidIndex1764360000000,
  OutboxCursorPending1764400000000,
  MessagesChatLidIndex1764410000000,
  SendLimits1764430000000,
  MessagesUnresolvedSenderIndex1764440000000,
  AuditLog1764450000000,
  DeliveryLog1764460000000,
  OutboxTraceparent1764480000000,
  InstanceExported1764470000000,
  MessagesFreshTakenId1764490000000,
  AuthKeysWrittenAt1764500000000,
  UnackedSends1764510000000,
  UnackedSendsSeed1764510000001,
  SendQueueByMessage1764520000000,
  MessagesCalls1764530000000,
  InstanceDeviceLists1764540000000,
];

export interface DataSourceOptions {
  url: string;
  /** Postgres schema to use (tests isolate themselves in a schema of their own). */
  schema?: string;
  poolSize?: number;
  /**
   * Keep every connection once opened (pg-pool's `min` = the pool's size): an idle one is not closed
   * after 10 s. For a process that warms its connections (the webhook relay plans its statements on
   * each at start): closed, they come back cold when traffic does.
   */
  keepConnections?: boolean;
  /** How long a connection may sit idle before the pool closes it (pg-pool's `idleTimeoutMillis`, 10 s unless given). */
  idleTimeoutMs?: number;
  /** The connections' `application_name` (pg_stat_activity): which process holds them. */
  applicationName?: string;
  /** Where a start says what it could not do and went on without (the documents' lz4, ADR 0071). */
  logger?: { warn(fields: object, message: string): void };
}

/**
 * DATABASE_POOL_SIZE: connections per process (default 10). A session worker with many busy
 * instances wants more: every inbound message and every send holds one for its statements.
 */
function poolSizeFromEnv(): number {
  const text = process.env.DATABASE_POOL_SIZE;
  if (text === undefined || text === '') return 10;
  const size = Number(text);
  if (!Number.isInteger(size) || size < 1 || size > 1000) throw new Error(`DATABASE_POOL_SIZE must be an integer from 1 to 1000, not "${text}"`);
  return size;
}

/** A boolean setting: true when unset. */
function switchFromEnv(name: 'DATABASE_PREPARED_STATEMENTS' | 'DATABASE_PIPELINE'): boolean {
  const text = (process.env[name] ?? '').trim().toLowerCase();
  if (text === '' || text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw new Error(`${name} must be true or false, not "${process.env[name]}"`);
}

/** How long opening a connection may take before it counts as failed (see createDataSource). */
const CONNECT_TIMEOUT_MS = 5_000;

/** A DataSource with our entities; migrations run explicitly at start, `synchronize` is never on. */
export function createDataSource(options: DataSourceOptions): DataSource {
  const max = options.poolSize ?? poolSizeFromEnv();
  return new DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    extra: {
      max,
      ...(options.keepConnections ? { min: max } : {}),
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMillis: options.idleTimeoutMs } : {}),
      ...(options.applicationName ? { application_name: options.applicationName } : {}),
      // A connect that is never answered (a failover: the address nobody serves any more) fails after
      // this instead of the OS's minutes, so a writer waiting out the outage tries again and finds the
      // database once it is back (issue #39); the pool's own waiters give up after the same time.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      // Hot parameterized statements go out prepared (see PreparingClient); DATABASE_PREPARED_STATEMENTS=false turns it off.
      ...(switchFromEnv('DATABASE_PREPARED_STATEMENTS') ? { Client: PreparingClient } : {}),
      ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
      // Statements issued while a connection is busy go out at once, answered in order (pg's pipeline
      // mode), instead of waiting in pg's queue for each one before them to finish: the inbound group
      // runs several instances' writes on its one connection at a time (docs/adr/0022). That queue is
      // deprecated (gone in pg 9). DATABASE_PIPELINE=false turns it off.
      pipeline: switchFromEnv('DATABASE_PIPELINE'),
    },
  });
}

/** Initialises the DataSource and applies pending migrations (one at a time, under an advisory lock). */
export async function openDatabase(options: DataSourceOptions): Promise<DataSource> {
  const dataSource = createDataSource(options);
  await dataSource.initialize();
  if (options.schema) await dataSource.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
  // Several processes may start at once; the lock makes the first one migrate and the rest wait.
  // The migrations run on the lock holder's own connection: on another one, a pool of one
  // (DATABASE_POOL_SIZE=1) waited for itself until pg-pool's connect timeout failed the start.
  const lockHolder = dataSource.createQueryRunner();
  await lockHolder.connect();
  await lockHolder.query('SELECT pg_advisory_lock(727001)');
  try {
    const migrations = new MigrationExecutor(dataSource, lockHolder);
    migrations.transaction = 'each';
    await migrations.executePendingMigrations();
    // A storage setting, not a migration: never holds or fails a start (ADR 0071).
    const compression = await compressDocumentsWithLz4(lockHolder).catch((error: unknown) => ({ set: [], left: [], lz4: true, error: String(error) }));
    if (compression.error || compression.left.length > 0)
      options.logger?.warn(
        { left: compression.left, error: compression.error },
        'documents not compressed with lz4 yet (a table held, or an ALTER refused): pglz until a later start sets them',
      );
  } finally {
    await lockHolder.query('SELECT pg_advisory_unlock(727001)');
    await lockHolder.release();
  }
  return dataSource;
}
