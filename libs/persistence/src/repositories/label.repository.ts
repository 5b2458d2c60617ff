import { recordId } from '@gw/platform';
import { RepositoryBase } from './repository-base';

/** A label as the phone's app state defines it. */
export interface LabelFacts {
  labelId: string;
  name: string;
  color: number;
  deleted: boolean;
  predefinedId: string;
}

export interface LabelRow extends LabelFacts {
  id: string;
  createdAt: Date;
  updatedAt: Date;
}

/** The 20 label colours of WhatsApp, by colour index (the API's `colorHex`). */
export const LABEL_COLORS = [
  '#ff9484',
  '#64c4ff',
  '#fed428',
  '#dfaef0',
  '#9ab6c1',
  '#56ccb4',
  '#fe9dfe',
  '#d3a91f',
  '#6f7bcf',
  '#d8e651',
  '#01d0e2',
  '#ffc5c7',
  '#92ceac',
  '#f64847',
  '#00a1f2',
  '#83e421',
  '#ffae04',
  '#b4ebff',
  '#9ba6ff',
  '#9568cf',
] as const;

function toRow(raw: Record<string, unknown>): LabelRow {
  return {
    id: raw.id as string,
    labelId: raw.label_id as string,
    name: raw.name as string,
    color: Number(raw.color),
    deleted: raw.deleted as boolean,
    predefinedId: raw.predefined_id as string,
    createdAt: raw.created_at as Date,
    updatedAt: raw.updated_at as Date,
  };
}

/** A label as the API answers it (`GET /labels`; the gateway's `LabelResponse` documents each field). */
export interface LabelRecord {
  id: string;
  name: string;
  color: number;
  colorHex: string;
  labelid: string;
  owner: string;
  created: string;
  updated: string;
}

/** The API's Label record of a stored row. */
export function toLabelRecord(row: LabelRow, owner: string): LabelRecord {
  return {
    id: row.id,
    name: row.name,
    color: row.color,
    colorHex: LABEL_COLORS[row.color] ?? '',
    labelid: row.labelId,
    owner,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}

/** The labels of each instance, as its phone's app state last said (see the labels migration). */
export class LabelRepository extends RepositoryBase {
  /** Stores what a `labels.edit` said; `changed` is false when the row already said exactly that. */
  async upsert(instanceId: string, label: LabelFacts): Promise<{ row: LabelRow; changed: boolean }> {
    const manager = this.db;
    const rows: Array<Record<string, unknown>> = await manager.query(
      `INSERT INTO labels AS l (instance_id, label_id, id, name, color, deleted, predefined_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (instance_id, label_id) DO UPDATE SET name = EXCLUDED.name, color = EXCLUDED.color, deleted = EXCLUDED.deleted,
         predefined_id = EXCLUDED.predefined_id, updated_at = now()
         WHERE (l.name, l.color, l.deleted, l.predefined_id) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.color, EXCLUDED.deleted, EXCLUDED.predefined_id)
       RETURNING *`,
      [instanceId, label.labelId, recordId(14), label.name, label.color, label.deleted, label.predefinedId],
    );
    if (rows.length) return { row: toRow(rows[0]), changed: true };
    const current: Array<Record<string, unknown>> = await manager.query(`SELECT * FROM labels WHERE instance_id = $1 AND label_id = $2`, [
      instanceId,
      label.labelId,
    ]);
    return { row: toRow(current[0]), changed: false };
  }

  /** One label not deleted, or null. */
  async find(instanceId: string, labelId: string): Promise<LabelRow | null> {
    const rows: Array<Record<string, unknown>> = await this.db.query(`SELECT * FROM labels WHERE instance_id = $1 AND label_id = $2 AND NOT deleted`, [
      instanceId,
      labelId,
    ]);
    return rows.length ? toRow(rows[0]) : null;
  }

  /** The id for a new label: one past the highest numeric id known (deleted ones included, as the phone does). */
  async nextId(instanceId: string): Promise<string> {
    const rows: Array<{ max: string | null }> = await this.db.query(
      `SELECT max(label_id::bigint)::text AS max FROM labels WHERE instance_id = $1 AND label_id ~ '^[0-9]{1,18}$'`,
      [instanceId],
    );
    return String(Number(rows[0]?.max ?? 0) + 1);
  }

  /** The labels of a chat (by phone/group JID or LID); null when the chat is unknown. */
  async chatLabels(instanceId: string, jid: string): Promise<string[] | null> {
    const rows: Array<{ labels: string[] }> = await this.db.query(
      `SELECT labels FROM chats WHERE instance_id = $1 AND (wa_chatid = $2 OR wa_chatlid = $2) LIMIT 1`,
      [instanceId, jid],
    );
    return rows.length ? rows[0].labels : null;
  }

  /** Labels not deleted, by WhatsApp label id (numeric ids in numeric order). */
  async list(instanceId: string): Promise<LabelRow[]> {
    const rows: Array<Record<string, unknown>> = await this.db.query(
      `SELECT * FROM labels WHERE instance_id = $1 AND NOT deleted ORDER BY length(label_id), label_id`,
      [instanceId],
    );
    return rows.map(toRow);
  }
}
