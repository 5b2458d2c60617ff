import type { EntityManager } from 'typeorm';
import { InstanceEntity, type ProxySettings } from '../entities/instance.entity';
import { OutboxCursorRepository } from './outbox-cursor.repository';
import { RepositoryBase } from './repository-base';

/**
 * What moves with a session (issue #40): the linked device's credentials, the instance's own settings,
 * its webhooks and sinks, its Chatwoot bridge and its chatbot (agents, triggers, knowledge, functions).
 * Values are as stored, secrets included: the bundle that carries them is encrypted. Not moved: the
 * message, chat and contact history, files, quick replies, labels and queues (WhatsApp-side data such as
 * privacy, labels and the phone's quick replies comes back from the account itself).
 */
export interface SessionSnapshot {
  device: { jid: string; lid: string; owner: string; profileName: string; isBusiness: boolean; platform: string; browser: string };
  settings: {
    name: string;
    systemName: string;
    adminField01: string;
    adminField02: string;
    openaiApikey: string;
    chatbotEnabled: boolean;
    chatbotIgnoreGroups: boolean;
    chatbotStopConversation: string;
    chatbotStopMinutes: number;
    chatbotStopWhenYouSendMsg: number;
    fieldsMap: Record<string, string>;
    msgDelayMin: number;
    msgDelayMax: number;
    currentPresence: string;
    historyDays: number;
    historyFullSync: boolean;
    /** The managed proxy assigned by the source's pools is not kept: the new server's pools assign their own. */
    proxy: Omit<ProxySettings, 'managed'> | null;
  };
  /** Baileys' auth state, serialised (BufferJSON) as the auth tables hold it: creds, and every key by type and id. */
  auth: { creds: string; keys: Array<{ type: string; id: string; value: string }> };
  /** Rows of `webhooks` (HTTP webhooks and event sinks), by column name, without their id and failure state. */
  webhooks: Array<Record<string, unknown>>;
  /** The row of `chatwoot_configs`, by column name, or null. */
  chatwoot: Record<string, unknown> | null;
  /** Rows of `chatbot_records` (their ids kept: triggers name agents and knowledge by id). */
  chatbotRecords: Array<Record<string, unknown>>;
  /** Rows of `chatbot_knowledge_chunks` (text and embedding), so knowledge answers without embedding again. */
  knowledgeChunks: Array<Record<string, unknown>>;
}

export type SessionExport<T> = { outcome: 'sealed'; sealed: T; entity: InstanceEntity } | { outcome: 'not_found' | 'exported' | 'not_paired' | 'held' };

export type SessionImport =
  | { outcome: 'imported'; entity: InstanceEntity }
  | { outcome: 'duplicate'; instanceId: string }
  | { outcome: 'records_taken' }
  /** A value Postgres refused (wrong type, missing, out of range): `detail` is its message. */
  | { outcome: 'invalid'; detail: string };

// The columns that move, each with its type for jsonb_to_recordset (a bundle's value of the wrong type fails the insert).
const WEBHOOK_COLUMNS = {
  url: 'text',
  enabled: 'boolean',
  events: 'text[]',
  exclude_messages: 'text[]',
  add_url_events: 'boolean',
  add_url_types_messages: 'boolean',
  include_token: 'boolean',
  secret: 'text',
  kind: 'text',
  options: 'jsonb',
} as const;
const CHATWOOT_COLUMNS = {
  enabled: 'boolean',
  url: 'text',
  access_token: 'text',
  account_id: 'bigint',
  inbox_id: 'bigint',
  ignore_groups: 'boolean',
  sign_messages: 'boolean',
  create_new_conversation: 'boolean',
  webhook_secret: 'text',
} as const;
const CHATBOT_RECORD_COLUMNS = { id: 'text', kind: 'text', data: 'jsonb', created_at: 'timestamptz' } as const;
const KNOWLEDGE_CHUNK_COLUMNS = { knowledge_id: 'text', ord: 'integer', text: 'text', embedding: 'real[]' } as const;

const names = (columns: Record<string, string>) => Object.keys(columns).join(', ');
const recordType = (columns: Record<string, string>) =>
  Object.entries(columns)
    .map(([name, type]) => `${name} ${type}`)
    .join(', ');

/** Export and import of a session. Both are one transaction each: a session is either here whole or not at all. */
export class SessionMoveRepository extends RepositoryBase {
  private readonly cursors = new OutboxCursorRepository(this.dataSource);

  /**
   * Takes the session out of this server. In one transaction: the instance row and its lease row locked
   * (a worker's claim of the instance waits for the commit, as in InstanceRepository.applyToAbandonedPairing),
   * refused while a live lease exists (the holder must have let go first, or its writes would continue);
   * the credentials and settings read; `seal` run on them (the encryption: if it throws, nothing changed);
   * the auth state deleted; the instance left as a tombstone, `exported_at` set, unpaired and not wanted
   * connected, so no worker adopts it and `/instance/connect` refuses it.
   */
  async exportSession<T>(instanceId: string, reason: string, seal: (snapshot: SessionSnapshot) => Promise<T>): Promise<SessionExport<T>> {
    return this.transaction(async (manager) => {
      const [locked]: Array<{ id: string }> = await manager.query(`SELECT id FROM instances WHERE id = $1 FOR UPDATE`, [instanceId]);
      if (!locked) return { outcome: 'not_found' };
      const [lease]: Array<{ live: boolean }> = await manager.query(`SELECT expires_at > now() AS live FROM session_leases WHERE instance_id = $1 FOR UPDATE`, [
        instanceId,
      ]);
      if (lease?.live) return { outcome: 'held' };
      const repo = manager.getRepository(InstanceEntity);
      const entity = await repo.findOneByOrFail({ id: instanceId });
      if (entity.exportedAt) return { outcome: 'exported' };
      const [creds]: Array<{ value: string }> = await manager.query(`SELECT value FROM auth_creds WHERE instance_id = $1`, [instanceId]);
      if (!creds || !entity.paired) return { outcome: 'not_paired' };
      const snapshot = await SessionMoveRepository.readSnapshot(manager, entity, creds.value);
      const sealed = await seal(snapshot);
      await manager.query(`DELETE FROM auth_keys WHERE instance_id = $1`, [instanceId]);
      await manager.query(`DELETE FROM auth_creds WHERE instance_id = $1`, [instanceId]);
      await repo.update(
        { id: instanceId },
        {
          exportedAt: new Date(),
          status: 'disconnected',
          desiredState: 'disconnected',
          paired: false,
          qrcode: '',
          paircode: '',
          pairingExpiresAt: null,
          lastDisconnect: new Date(),
          lastDisconnectReason: reason,
        },
      );
      return { outcome: 'sealed', sealed, entity: await repo.findOneByOrFail({ id: instanceId }) };
    });
  }

  /**
   * Creates an instance from a snapshot, its auth state and settings in ONE transaction (a failure at any
   * step leaves nothing). Refused when an instance of this server already holds the same linked device
   * (same device JID, not exported): the bundle was imported before, and two holders would log each other
   * out. Imports of one device are serialised by an advisory lock on its JID, so two at once cannot both pass.
   * Chatbot records keep their ids; when they are taken here (the source instance's tombstone is on this
   * server), `records_taken`.
   */
  async importSession(values: { id: string; token: string; snapshot: SessionSnapshot; reason: string }): Promise<SessionImport> {
    const { snapshot } = values;
    try {
      return await this.transaction(async (manager) => {
        await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('session-import:' || $1, 0))`, [snapshot.device.jid]);
        const [existing]: Array<{ id: string }> = await manager.query(`SELECT id FROM instances WHERE jid = $1 AND exported_at IS NULL LIMIT 1`, [
          snapshot.device.jid,
        ]);
        if (existing) return { outcome: 'duplicate', instanceId: existing.id };
        const { device, settings } = snapshot;
        const repo = manager.getRepository(InstanceEntity);
        await repo.insert({
          id: values.id,
          token: values.token,
          ...settings,
          proxy: settings.proxy ? { ...settings.proxy, managed: null } : null,
          ...device,
          status: 'disconnected',
          desiredState: 'disconnected',
          paired: true,
          lastDisconnectReason: values.reason,
        });
        await manager.query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, [values.id, snapshot.auth.creds]);
        if (snapshot.auth.keys.length)
          await manager.query(
            `INSERT INTO auth_keys (instance_id, type, key_id, value)
             SELECT $1, t, i, v FROM unnest($2::text[], $3::text[], $4::text[]) AS u(t, i, v)`,
            [values.id, snapshot.auth.keys.map((key) => key.type), snapshot.auth.keys.map((key) => key.id), snapshot.auth.keys.map((key) => key.value)],
          );
        await this.writeSettings(manager, values.id, snapshot);
        return { outcome: 'imported', entity: await repo.findOneByOrFail({ id: values.id }) };
      });
    } catch (error) {
      const { code, table, message } = error as { code?: string; table?: string; message?: string };
      // 23505 on chatbot_records' key: the records' ids are taken (the bundle's source is on this server).
      if (code === '23505' && table === 'chatbot_records') return { outcome: 'records_taken' };
      // Data exceptions (22…), a missing value (23502), a broken check (23514): the snapshot's values, not a bug.
      if (code && (code.startsWith('22') || code === '23502' || code === '23514')) return { outcome: 'invalid', detail: message ?? code };
      throw error;
    }
  }

  private static async readSnapshot(manager: EntityManager, entity: InstanceEntity, creds: string): Promise<SessionSnapshot> {
    const id = entity.id;
    const keys: Array<{ type: string; id: string; value: string }> = await manager.query(
      `SELECT type, key_id AS id, value FROM auth_keys WHERE instance_id = $1 ORDER BY type, key_id`,
      [id],
    );
    const webhooks: Array<Record<string, unknown>> = await manager.query(
      `SELECT ${names(WEBHOOK_COLUMNS)} FROM webhooks WHERE instance_id = $1 ORDER BY created, id`,
      [id],
    );
    const [chatwoot]: Array<Record<string, unknown>> = await manager.query(`SELECT ${names(CHATWOOT_COLUMNS)} FROM chatwoot_configs WHERE instance_id = $1`, [
      id,
    ]);
    const chatbotRecords: Array<Record<string, unknown>> = await manager.query(
      `SELECT ${names(CHATBOT_RECORD_COLUMNS)} FROM chatbot_records WHERE instance_id = $1 ORDER BY created_at, id`,
      [id],
    );
    const knowledgeChunks: Array<Record<string, unknown>> = await manager.query(
      `SELECT ${names(KNOWLEDGE_CHUNK_COLUMNS)} FROM chatbot_knowledge_chunks WHERE instance_id = $1 ORDER BY knowledge_id, ord`,
      [id],
    );
    const proxy = entity.proxy ? { ...entity.proxy } : null;
    if (proxy) delete (proxy as Partial<ProxySettings>).managed;
    return {
      device: {
        jid: entity.jid || deviceJidOf(creds),
        lid: entity.lid,
        owner: entity.owner,
        profileName: entity.profileName,
        isBusiness: entity.isBusiness,
        platform: entity.platform,
        browser: entity.browser,
      },
      settings: {
        name: entity.name,
        systemName: entity.systemName,
        adminField01: entity.adminField01,
        adminField02: entity.adminField02,
        openaiApikey: entity.openaiApikey,
        chatbotEnabled: entity.chatbotEnabled,
        chatbotIgnoreGroups: entity.chatbotIgnoreGroups,
        chatbotStopConversation: entity.chatbotStopConversation,
        chatbotStopMinutes: entity.chatbotStopMinutes,
        chatbotStopWhenYouSendMsg: entity.chatbotStopWhenYouSendMsg,
        fieldsMap: entity.fieldsMap ?? {},
        msgDelayMin: entity.msgDelayMin,
        msgDelayMax: entity.msgDelayMax,
        currentPresence: entity.currentPresence,
        historyDays: entity.historyDays,
        historyFullSync: entity.historyFullSync,
        proxy,
      },
      auth: { creds, keys },
      webhooks,
      chatwoot: chatwoot ?? null,
      chatbotRecords,
      knowledgeChunks,
    };
  }

  /**
   * The settings' rows: each table's rows from the snapshot through jsonb_to_recordset with the column
   * types, so a value of the wrong type fails here (and rolls back the import). Webhooks get new ids; the
   * followers of an enabled chatbot or Chatwoot bridge start their outbox cursors now (none of the events
   * of the source server exist here).
   */
  private async writeSettings(manager: EntityManager, instanceId: string, snapshot: SessionSnapshot): Promise<void> {
    if (snapshot.webhooks.length)
      await manager.query(
        `INSERT INTO webhooks (id, instance_id, ${names(WEBHOOK_COLUMNS)})
         SELECT 'r' || substr(md5(gen_random_uuid()::text), 1, 14), $1, ${prefixed(WEBHOOK_COLUMNS)}
         FROM jsonb_to_recordset($2::jsonb) AS r(${recordType(WEBHOOK_COLUMNS)})`,
        [instanceId, JSON.stringify(snapshot.webhooks)],
      );
    if (snapshot.chatwoot) {
      await manager.query(
        `INSERT INTO chatwoot_configs (instance_id, ${names(CHATWOOT_COLUMNS)})
         SELECT $1, ${prefixed(CHATWOOT_COLUMNS)} FROM jsonb_to_recordset($2::jsonb) AS r(${recordType(CHATWOOT_COLUMNS)})`,
        [instanceId, JSON.stringify([snapshot.chatwoot])],
      );
      if (snapshot.chatwoot.enabled === true) await this.cursors.within(manager).start('chatwoot', instanceId, true);
    }
    if (snapshot.chatbotRecords.length)
      await manager.query(
        `INSERT INTO chatbot_records (instance_id, ${names(CHATBOT_RECORD_COLUMNS)})
         SELECT $1, ${prefixed(CHATBOT_RECORD_COLUMNS)} FROM jsonb_to_recordset($2::jsonb) AS r(${recordType(CHATBOT_RECORD_COLUMNS)})`,
        [instanceId, JSON.stringify(snapshot.chatbotRecords)],
      );
    if (snapshot.knowledgeChunks.length)
      await manager.query(
        `INSERT INTO chatbot_knowledge_chunks (instance_id, ${names(KNOWLEDGE_CHUNK_COLUMNS)})
         SELECT $1, ${prefixed(KNOWLEDGE_CHUNK_COLUMNS)} FROM jsonb_to_recordset($2::jsonb) AS r(${recordType(KNOWLEDGE_CHUNK_COLUMNS)})
         WHERE r.knowledge_id IN (SELECT id FROM chatbot_records WHERE instance_id = $1)`,
        [instanceId, JSON.stringify(snapshot.knowledgeChunks)],
      );
    if (snapshot.settings.chatbotEnabled) await this.cursors.within(manager).start('chatbot', instanceId, true);
  }
}

const prefixed = (columns: Record<string, string>) =>
  Object.keys(columns)
    .map((name) => `r.${name}`)
    .join(', ');

/** The device JID in serialised creds (`me.id`), for an instance whose row lost it; '' when absent. */
function deviceJidOf(creds: string): string {
  try {
    const id = (JSON.parse(creds) as { me?: { id?: unknown } }).me?.id;
    return typeof id === 'string' ? id : '';
  } catch {
    return '';
  }
}
