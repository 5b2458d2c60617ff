import { OutboxCursorRepository } from './outbox-cursor.repository';
import { RepositoryBase } from './repository-base';

/** An instance's Chatwoot bridge settings (`PUT /chatwoot/config`) and the secret of its webhook URL. */
export interface ChatwootConfigRow {
  instanceId: string;
  enabled: boolean;
  url: string;
  accessToken: string;
  accountId: number;
  inboxId: number;
  ignoreGroups: boolean;
  signMessages: boolean;
  createNewConversation: boolean;
  webhookSecret: string;
  created: Date;
  updated: Date;
}

export type ChatwootConfigValues = Omit<ChatwootConfigRow, 'instanceId' | 'webhookSecret' | 'created' | 'updated'>;

/** Work of the bridge: `kind` says which way and what, `lane` the conversation it is ordered in. */
export interface NewChatwootJob {
  lane: string;
  kind: string;
  /** Unique per instance: the same key twice is one job (a redelivered webhook, a replayed event). */
  dedupeKey: string;
  payload: Record<string, unknown>;
}

export interface ChatwootJob extends NewChatwootJob {
  id: string;
  instanceId: string;
  /** Tries so far, this one included (a claim counts: a crash mid-try is a try). */
  attempts: number;
  /** Fences the claim: results are recorded only while it is still this one. */
  claimedBy: string;
  createdAt: Date;
}

/** A WhatsApp message and its copy in Chatwoot (`origin` says where it was written first). */
export interface ChatwootMessageLink {
  waMessageId: string;
  cwMessageId: number | null;
  cwConversationId: number | null;
  origin: 'whatsapp' | 'chatwoot';
  chatJid: string;
}

/** The Chatwoot contact and conversation of a chat. */
export interface ChatwootChatRow {
  chatKey: string;
  /** The LID the chat is also known by when kept under its phone number ('' if none known). */
  lid: string;
  contactId: number;
  contactName: string;
  sourceId: string;
  conversationId: number | null;
  conversationStatus: string;
}

type Raw = Record<string, unknown>;

const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

function toConfig(raw: Raw): ChatwootConfigRow {
  return {
    instanceId: raw.instance_id as string,
    enabled: raw.enabled as boolean,
    url: raw.url as string,
    accessToken: raw.access_token as string,
    accountId: Number(raw.account_id),
    inboxId: Number(raw.inbox_id),
    ignoreGroups: raw.ignore_groups as boolean,
    signMessages: raw.sign_messages as boolean,
    createNewConversation: raw.create_new_conversation as boolean,
    webhookSecret: raw.webhook_secret as string,
    created: raw.created_at as Date,
    updated: raw.updated_at as Date,
  };
}

function toJob(raw: Raw): ChatwootJob {
  return {
    id: String(raw.id),
    instanceId: raw.instance_id as string,
    lane: raw.lane as string,
    kind: raw.kind as string,
    dedupeKey: raw.dedupe_key as string,
    payload: raw.payload as Record<string, unknown>,
    attempts: Number(raw.attempts),
    claimedBy: raw.claimed_by as string,
    createdAt: raw.created_at as Date,
  };
}

function toLink(raw: Raw): ChatwootMessageLink {
  return {
    waMessageId: raw.wa_message_id as string,
    cwMessageId: num(raw.cw_message_id),
    cwConversationId: num(raw.cw_conversation_id),
    origin: raw.origin as ChatwootMessageLink['origin'],
    chatJid: raw.chat_jid as string,
  };
}

function toChat(raw: Raw): ChatwootChatRow {
  return {
    chatKey: raw.chat_key as string,
    lid: (raw.lid as string) ?? '',
    contactId: Number(raw.contact_id),
    contactName: raw.contact_name as string,
    sourceId: raw.source_id as string,
    conversationId: num(raw.conversation_id),
    conversationStatus: raw.conversation_status as string,
  };
}

/** Everything the Chatwoot bridge keeps: settings, durable jobs, the message map and the chat map. */
export class ChatwootRepository extends RepositoryBase {
  // --- settings -------------------------------------------------------------------------------------

  async findConfig(instanceId: string): Promise<ChatwootConfigRow | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM chatwoot_configs WHERE instance_id = $1`, [instanceId]);
    return rows.length ? toConfig(rows[0]) : null;
  }

  /**
   * Creates or replaces the settings; the webhook secret is set once (`secret` is used only when there is
   * none yet). Turned on, the bridge's outbox cursor (consumer `chatwoot`) starts here, in the same
   * transaction: messages from this moment on are copied, none from before (the follower would only
   * start at its next look at the enabled instances); turned off, the cursor goes.
   */
  async saveConfig(instanceId: string, values: ChatwootConfigValues, secret: string): Promise<ChatwootConfigRow> {
    return this.transaction(async (manager) => {
      // Another Chatwoot (or account, or inbox): the contacts, conversations and message ids known belong to
      // the old one. Its ids mean other messages in the new one: a receipt, a deletion or a reply's
      // in_reply_to would reach the wrong message. The links of agents' replies stay (without their old
      // ids): their WhatsApp messages must still never be copied back.
      const switched = [instanceId, values.url, values.accountId, values.inboxId];
      const changed = `EXISTS (SELECT 1 FROM chatwoot_configs WHERE instance_id = $1 AND (url <> $2 OR account_id <> $3 OR inbox_id <> $4))`;
      await manager.query(`DELETE FROM chatwoot_chats WHERE instance_id = $1 AND ${changed}`, switched);
      await manager.query(`DELETE FROM chatwoot_messages WHERE instance_id = $1 AND origin = 'whatsapp' AND ${changed}`, switched);
      await manager.query(
        `UPDATE chatwoot_messages SET cw_message_id = NULL, cw_conversation_id = NULL WHERE instance_id = $1 AND origin = 'chatwoot' AND ${changed}`,
        switched,
      );
      const row = await this.within(manager).upsertConfig(instanceId, values, secret);
      if (row.enabled) {
        await manager.query(
          `INSERT INTO outbox_cursors (consumer, instance_id, tx, id, pending)
           VALUES ('chatwoot', $1, ${OutboxCursorRepository.START})
           ON CONFLICT (consumer, instance_id) DO NOTHING`,
          [instanceId],
        );
      } else {
        // Off: what happens meanwhile is never copied (turned on again, the cursor starts afresh).
        await manager.query(`DELETE FROM outbox_cursors WHERE consumer = 'chatwoot' AND instance_id = $1`, [instanceId]);
      }
      return row;
    });
  }

  private async upsertConfig(instanceId: string, values: ChatwootConfigValues, secret: string): Promise<ChatwootConfigRow> {
    const rows: Raw[] = await this.db.query(
      `INSERT INTO chatwoot_configs (instance_id, enabled, url, access_token, account_id, inbox_id, ignore_groups, sign_messages, create_new_conversation, webhook_secret)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (instance_id) DO UPDATE SET enabled = EXCLUDED.enabled, url = EXCLUDED.url, access_token = EXCLUDED.access_token,
         account_id = EXCLUDED.account_id, inbox_id = EXCLUDED.inbox_id, ignore_groups = EXCLUDED.ignore_groups,
         sign_messages = EXCLUDED.sign_messages, create_new_conversation = EXCLUDED.create_new_conversation, updated_at = now()
       RETURNING *`,
      [
        instanceId,
        values.enabled,
        values.url,
        values.accessToken,
        values.accountId,
        values.inboxId,
        values.ignoreGroups,
        values.signMessages,
        values.createNewConversation,
        secret,
      ],
    );
    return toConfig(rows[0]);
  }

  /** Instances whose bridge is on: the ones the outbox follower copies into Chatwoot. */
  async enabledInstances(): Promise<string[]> {
    const rows: Array<{ instance_id: string }> = await this.db.query(`SELECT instance_id FROM chatwoot_configs WHERE enabled ORDER BY instance_id`);
    return rows.map((row) => row.instance_id);
  }

  // --- jobs -----------------------------------------------------------------------------------------

  /** Inserts jobs inside the caller's transaction; a key already present (done or not) adds nothing. Returns how many were new. */
  async enqueue(instanceId: string, jobs: NewChatwootJob[]): Promise<number> {
    const manager = this.db;
    if (jobs.length === 0) return 0;
    const rows: Array<{ id: string }> = await manager.query(
      `INSERT INTO chatwoot_jobs (instance_id, lane, kind, dedupe_key, payload)
       SELECT $1, l, k, d, p::jsonb FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(l, k, d, p, n)
       ORDER BY n
       ON CONFLICT (instance_id, dedupe_key) DO NOTHING
       RETURNING id`,
      [instanceId, jobs.map((job) => job.lane), jobs.map((job) => job.kind), jobs.map((job) => job.dedupeKey), jobs.map((job) => JSON.stringify(job.payload))],
    );
    return rows.length;
  }

  /** The phone-number JIDs of LIDs, as far as the instance knows them (inside the follower's transaction: the lanes of new jobs). */
  async numbersOfLids(instanceId: string, lids: string[]): Promise<Map<string, string>> {
    const manager = this.db;
    if (lids.length === 0) return new Map();
    const rows: Array<{ lid: string; pn: string }> = await manager.query(`SELECT lid, pn FROM lid_mappings WHERE instance_id = $1 AND lid = ANY($2::text[])`, [
      instanceId,
      lids,
    ]);
    return new Map(rows.map((row) => [row.lid, row.pn]));
  }

  /**
   * A received Chatwoot webhook's work, in one transaction: the links of the WhatsApp messages it will
   * make (so their own `messages` events are known as copies, not copied back) and its jobs. Returns
   * how many jobs were new (0: a redelivery).
   */
  async enqueueFromChatwoot(instanceId: string, jobs: NewChatwootJob[], links: ChatwootMessageLink[]): Promise<number> {
    return this.transaction(async (manager) => {
      const chatwoot = this.within(manager);
      const added = await chatwoot.enqueue(instanceId, jobs);
      if (added > 0) for (const link of links) await chatwoot.link(instanceId, link);
      return added;
    });
  }

  /**
   * Claims due lane heads: per (instance, lane) only the oldest unfinished job can be taken, and only
   * when it is due and nobody holds it, so a lane's jobs run one at a time and in order, by any number
   * of processes side by side (SKIP LOCKED: a head another claimer is taking is left to it; the
   * conditions are checked again on the locked row, so a head finished or claimed meanwhile is not
   * taken twice). The claim counts as an attempt. A crash after it leaves the job claimed until
   * `claimMs` passes; then it is due again, with its attempt counted (the performer then looks for
   * what the crashed try may already have written).
   */
  async claim(claimer: string, limit: number, claimMs: number): Promise<ChatwootJob[]> {
    const rows: Raw[] = await this.db.query(
      `WITH RECURSIVE heads AS (
         -- Each lane's oldest unfinished job, one index probe per lane (a skip scan of chatwoot_jobs_pending):
         -- the cost follows the number of lanes, not of jobs waiting behind their heads.
         (SELECT instance_id, lane, id FROM chatwoot_jobs WHERE done_at IS NULL ORDER BY instance_id, lane, id LIMIT 1)
         UNION ALL
         SELECT next.instance_id, next.lane, next.id FROM heads h CROSS JOIN LATERAL (
           SELECT instance_id, lane, id FROM chatwoot_jobs WHERE done_at IS NULL AND (instance_id, lane) > (h.instance_id, h.lane)
           ORDER BY instance_id, lane, id LIMIT 1) next),
       due AS (
         SELECT j.id FROM heads JOIN chatwoot_jobs j ON j.id = heads.id
         WHERE j.run_after <= now() AND (j.claimed_until IS NULL OR j.claimed_until < now()) ORDER BY j.run_after, j.id LIMIT $1),
       taken AS (
         SELECT j.id FROM chatwoot_jobs j JOIN due ON due.id = j.id
         WHERE j.done_at IS NULL AND (j.claimed_until IS NULL OR j.claimed_until < now())
         FOR UPDATE OF j SKIP LOCKED),
       claimed AS (
         UPDATE chatwoot_jobs j SET claimed_by = $2, claimed_until = now() + ($3 || ' milliseconds')::interval, attempts = j.attempts + 1
         FROM taken WHERE j.id = taken.id RETURNING j.*)
       SELECT * FROM claimed ORDER BY id`,
      [limit, claimer, String(claimMs)],
    );
    return rows.map(toJob);
  }

  /** The job is done (or given up: `outcome` says which); the lane moves on. False when the claim was lost. */
  async finish(job: ChatwootJob, outcome: string, error = ''): Promise<boolean> {
    const rows: Raw[] = await this.db.query(
      `WITH done AS (UPDATE chatwoot_jobs SET done_at = now(), outcome = $3, last_error = $4, claimed_until = NULL
         WHERE id = $1 AND claimed_by = $2 AND done_at IS NULL RETURNING id) SELECT * FROM done`,
      [job.id, job.claimedBy, outcome, error],
    );
    return rows.length > 0;
  }

  /** The job is still being worked on: its claim runs `claimMs` from now. False when the claim was lost (finished, or lapsed and taken). */
  async extendClaim(job: ChatwootJob, claimMs: number): Promise<boolean> {
    const rows: Raw[] = await this.db.query(
      `WITH kept AS (UPDATE chatwoot_jobs SET claimed_until = now() + ($3 || ' milliseconds')::interval
         WHERE id = $1 AND claimed_by = $2 AND done_at IS NULL RETURNING id) SELECT * FROM kept`,
      [job.id, job.claimedBy, String(claimMs)],
    );
    return rows.length > 0;
  }

  /** The try failed: the job (and its lane behind it) waits `delayMs`, then is due again. */
  async retryLater(job: ChatwootJob, delayMs: number, error: string): Promise<void> {
    await this.db.query(
      `UPDATE chatwoot_jobs SET run_after = now() + ($3 || ' milliseconds')::interval, claimed_by = NULL, claimed_until = NULL, last_error = $4
       WHERE id = $1 AND claimed_by = $2 AND done_at IS NULL`,
      [job.id, job.claimedBy, String(Math.max(0, Math.round(delayMs))), error.slice(0, 2000)],
    );
  }

  /** Jobs not done yet, oldest first (tests, metrics). */
  async pending(instanceId: string): Promise<Array<{ kind: string; lane: string; attempts: number; lastError: string }>> {
    const rows: Raw[] = await this.db.query(
      `SELECT kind, lane, attempts, last_error FROM chatwoot_jobs WHERE instance_id = $1 AND done_at IS NULL ORDER BY id`,
      [instanceId],
    );
    return rows.map((row) => ({ kind: row.kind as string, lane: row.lane as string, attempts: Number(row.attempts), lastError: row.last_error as string }));
  }

  /** Forgets finished jobs older than `ageMs` (their keys then no longer catch a redelivery). */
  async purgeDone(ageMs: number): Promise<number> {
    const rows: Array<{ n: number }> = await this.db.query(
      `WITH gone AS (DELETE FROM chatwoot_jobs WHERE done_at < now() - ($1 || ' milliseconds')::interval RETURNING 1) SELECT count(*)::int AS n FROM gone`,
      [String(ageMs)],
    );
    return rows[0].n;
  }

  // --- message links --------------------------------------------------------------------------------

  /** Records (or completes) a link; a Chatwoot id already recorded is kept. */
  async link(instanceId: string, link: ChatwootMessageLink): Promise<void> {
    await this.db.query(
      `INSERT INTO chatwoot_messages (instance_id, wa_message_id, cw_message_id, cw_conversation_id, origin, chat_jid) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (instance_id, wa_message_id) DO UPDATE SET
         cw_message_id = COALESCE(chatwoot_messages.cw_message_id, EXCLUDED.cw_message_id),
         cw_conversation_id = COALESCE(chatwoot_messages.cw_conversation_id, EXCLUDED.cw_conversation_id),
         chat_jid = CASE WHEN chatwoot_messages.chat_jid = '' THEN EXCLUDED.chat_jid ELSE chatwoot_messages.chat_jid END`,
      [instanceId, link.waMessageId, link.cwMessageId, link.cwConversationId, link.origin, link.chatJid],
    );
  }

  async linkOfWhatsApp(instanceId: string, waMessageId: string): Promise<ChatwootMessageLink | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM chatwoot_messages WHERE instance_id = $1 AND wa_message_id = $2`, [instanceId, waMessageId]);
    return rows.length ? toLink(rows[0]) : null;
  }

  /** The WhatsApp messages of a Chatwoot message (one per attachment of an agent's reply), in the order written. */
  async linksOfChatwoot(instanceId: string, cwMessageId: number): Promise<ChatwootMessageLink[]> {
    const rows: Raw[] = await this.db.query(
      `SELECT * FROM chatwoot_messages WHERE instance_id = $1 AND cw_message_id = $2 ORDER BY created_at, wa_message_id`,
      [instanceId, cwMessageId],
    );
    return rows.map(toLink);
  }

  // --- chats ----------------------------------------------------------------------------------------

  /** The chat kept under `chatKey`, else (a LID) the chat kept under the number that LID belongs to. */
  async findChat(instanceId: string, chatKey: string): Promise<ChatwootChatRow | null> {
    const rows: Raw[] = await this.db.query(
      `SELECT * FROM chatwoot_chats WHERE instance_id = $1 AND (chat_key = $2 OR lid = $2) ORDER BY chat_key = $2 DESC, updated_at DESC LIMIT 1`,
      [instanceId, chatKey],
    );
    return rows.length ? toChat(rows[0]) : null;
  }

  async chatOfConversation(instanceId: string, conversationId: number): Promise<ChatwootChatRow | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM chatwoot_chats WHERE instance_id = $1 AND conversation_id = $2 LIMIT 1`, [
      instanceId,
      conversationId,
    ]);
    return rows.length ? toChat(rows[0]) : null;
  }

  async saveChat(instanceId: string, chat: ChatwootChatRow): Promise<void> {
    await this.db.query(
      `INSERT INTO chatwoot_chats (instance_id, chat_key, contact_id, contact_name, source_id, conversation_id, conversation_status, lid)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (instance_id, chat_key) DO UPDATE SET contact_id = EXCLUDED.contact_id, contact_name = EXCLUDED.contact_name, source_id = EXCLUDED.source_id,
         conversation_id = EXCLUDED.conversation_id, conversation_status = EXCLUDED.conversation_status,
         lid = CASE WHEN EXCLUDED.lid <> '' THEN EXCLUDED.lid ELSE chatwoot_chats.lid END, updated_at = now()`,
      [instanceId, chat.chatKey, chat.contactId, chat.contactName, chat.sourceId, chat.conversationId, chat.conversationStatus, chat.lid ?? ''],
    );
  }

  /** A chat known by its LID learned its phone number: it is kept under the number from now on (one contact, one conversation). */
  async rekeyChat(instanceId: string, fromKey: string, toKey: string): Promise<void> {
    await this.db.query(
      `UPDATE chatwoot_chats SET chat_key = $3, lid = CASE WHEN $2 LIKE '%@lid' THEN $2 ELSE lid END, updated_at = now() WHERE instance_id = $1 AND chat_key = $2
         AND NOT EXISTS (SELECT 1 FROM chatwoot_chats WHERE instance_id = $1 AND chat_key = $3)`,
      [instanceId, fromKey, toKey],
    );
  }

  /**
   * Takes the instance's contact lease (finding or creating contacts and conversations is one at a time
   * per instance, across processes) unless another holder's lease is still running. A crashed holder's
   * lease lapses after `ttlMs`. True when taken.
   */
  async tryLockContacts(instanceId: string, holder: string, ttlMs: number): Promise<boolean> {
    const rows: Raw[] = await this.db.query(
      `INSERT INTO chatwoot_contact_locks (instance_id, holder, held_until) VALUES ($1, $2, now() + ($3 || ' milliseconds')::interval)
       ON CONFLICT (instance_id) DO UPDATE SET holder = EXCLUDED.holder, held_until = EXCLUDED.held_until
       WHERE chatwoot_contact_locks.held_until < now() OR chatwoot_contact_locks.holder = EXCLUDED.holder
       RETURNING 1`,
      [instanceId, holder, String(Math.max(1, Math.round(ttlMs)))],
    );
    return rows.length > 0;
  }

  async unlockContacts(instanceId: string, holder: string): Promise<void> {
    await this.db.query(`DELETE FROM chatwoot_contact_locks WHERE instance_id = $1 AND holder = $2`, [instanceId, holder]);
  }

  /** The chat's contact is gone from Chatwoot (deleted there): found or created again next time. */
  async forgetChat(instanceId: string, chatKey: string): Promise<void> {
    await this.db.query(`DELETE FROM chatwoot_chats WHERE instance_id = $1 AND chat_key = $2`, [instanceId, chatKey]);
  }

  /** Chatwoot said the conversation's status changed (webhook): the next message knows whether to reuse it. */
  async setConversationStatus(instanceId: string, conversationId: number, status: string): Promise<void> {
    await this.db.query(`UPDATE chatwoot_chats SET conversation_status = $3, updated_at = now() WHERE instance_id = $1 AND conversation_id = $2`, [
      instanceId,
      conversationId,
      status,
    ]);
  }
}
