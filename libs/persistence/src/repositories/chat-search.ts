/**
 * `/chat/find`'s filters and sort as SQL: the only Chat fields a client may name, each with the SQL
 * expression that reads it from `chats` (the API's field names are not our columns) and its kind.
 * Nothing a client sends ever becomes SQL text: field names are looked up here, values are bound.
 */
export type ChatFieldKind = 'text' | 'boolean' | 'number' | 'list';

/** How a filter compares: uazapi's value prefixes (`~`, `!~`, `!=`, `>=`, `>`, `<=`, `<`) and plain equality. */
export type ChatComparison = 'contains' | 'not_contains' | 'equals' | 'not_equals' | 'gt' | 'gte' | 'lt' | 'lte';

/** A lead text field stored in the `lead` document ('' when absent). */
const leadText = (key: string) => `COALESCE(lead->>'${key}', '')`;
/** A lead number stored in the `lead` document (0 when absent). */
const leadNumber = (key: string) => `(CASE WHEN jsonb_typeof(lead->'${key}') = 'number' THEN (lead->>'${key}')::numeric ELSE 0 END)`;
const groupFlag = (key: string) => `COALESCE((group_flags->>'${key}')::boolean, false)`;

const LEAD_CUSTOM_FIELDS = Object.fromEntries(
  Array.from({ length: 20 }, (_, index) => {
    const key = `lead_field${String(index + 1).padStart(2, '0')}`;
    return [key, { sql: leadText(key), kind: 'text' as const }];
  }),
) as Record<`lead_field${string}`, { sql: string; kind: 'text' }>;

/** `wa_fastid` is `<owner>:<number>`, the owner bound as a parameter (`:owner` below). */
const FAST_ID = `(:owner || ':' || split_part(split_part(CASE WHEN is_group OR wa_chatid <> '' THEN wa_chatid ELSE wa_chatlid END, '@', 1), ':', 1))`;

export const CHAT_FIELDS = {
  wa_fastid: { sql: FAST_ID, kind: 'text' },
  wa_chatid: { sql: 'wa_chatid', kind: 'text' },
  wa_chatlid: { sql: 'wa_chatlid', kind: 'text' },
  wa_contactName: { sql: 'wa_contact_name', kind: 'text' },
  wa_name: { sql: 'wa_name', kind: 'text' },
  // As the Chat record answers it (toChatRecord).
  name: { sql: `COALESCE(NULLIF(name, ''), NULLIF(wa_contact_name, ''), wa_name)`, kind: 'text' },
  wa_archived: { sql: 'archived', kind: 'boolean' },
  wa_isBlocked: { sql: 'blocked', kind: 'boolean' },
  wa_isGroup: { sql: 'is_group', kind: 'boolean' },
  wa_isGroup_admin: { sql: groupFlag('admin'), kind: 'boolean' },
  wa_isGroup_announce: { sql: groupFlag('announce'), kind: 'boolean' },
  wa_isGroup_community: { sql: groupFlag('community'), kind: 'boolean' },
  wa_isGroup_member: { sql: groupFlag('member'), kind: 'boolean' },
  wa_isPinned: { sql: 'pinned', kind: 'boolean' },
  wa_label: { sql: 'labels', kind: 'list' },
  wa_notes: { sql: 'notes', kind: 'text' },
  wa_lastMsgTimestamp: { sql: 'last_msg_timestamp', kind: 'number' },
  wa_lastMessageType: { sql: 'last_message_type', kind: 'text' },
  wa_unreadCount: { sql: 'unread_count', kind: 'number' },
  wa_muteEndTime: { sql: 'mute_end_time', kind: 'number' },
  lead_name: { sql: leadText('lead_name'), kind: 'text' },
  lead_fullName: { sql: leadText('lead_fullName'), kind: 'text' },
  lead_email: { sql: leadText('lead_email'), kind: 'text' },
  lead_personalid: { sql: leadText('lead_personalid'), kind: 'text' },
  lead_status: { sql: leadText('lead_status'), kind: 'text' },
  lead_notes: { sql: leadText('lead_notes'), kind: 'text' },
  lead_assignedAttendant_id: { sql: leadText('lead_assignedAttendant_id'), kind: 'text' },
  lead_tags: {
    sql: `ARRAY(SELECT jsonb_array_elements_text(CASE WHEN jsonb_typeof(lead->'lead_tags') = 'array' THEN lead->'lead_tags' ELSE '[]'::jsonb END))`,
    kind: 'list',
  },
  lead_isTicketOpen: { sql: `COALESCE(lead->'lead_isTicketOpen' = 'true'::jsonb, false)`, kind: 'boolean' },
  lead_kanbanOrder: { sql: leadNumber('lead_kanbanOrder'), kind: 'number' },
  ...LEAD_CUSTOM_FIELDS,
  chatbot_disableUntil: { sql: leadNumber('chatbot_disableUntil'), kind: 'number' },
} as const satisfies Record<string, { sql: string; kind: ChatFieldKind }>;

export type ChatField = keyof typeof CHAT_FIELDS;

/** Fields a list can be sorted by (every one but the lists). */
export const CHAT_SORT_FIELDS = (Object.keys(CHAT_FIELDS) as ChatField[]).filter((field) => CHAT_FIELDS[field].kind !== 'list');

export interface ChatFilter {
  field: ChatField;
  comparison: ChatComparison;
  value: string | number | boolean;
}

export interface ChatSearch {
  filters: ChatFilter[];
  /** How the filters combine. */
  operator: 'AND' | 'OR';
  sort: { field: ChatField; descending: boolean };
  limit: number;
  offset: number;
}

const OPERATORS: Record<Exclude<ChatComparison, 'contains' | 'not_contains'>, string> = {
  equals: '=',
  not_equals: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
};

/** Values bound as `$n`, the instance's owner bound once where `wa_fastid` needs it. */
export class SqlParameters {
  readonly values: unknown[] = [];
  private ownerParameter = '';

  constructor(private readonly owner: string) {}

  bind(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  ownerSql(): string {
    return (this.ownerParameter ||= `${this.bind(this.owner)}::text`);
  }
}

/** The SQL that reads a field. */
export function chatFieldSql(field: ChatField, parameters: SqlParameters): string {
  const { sql } = CHAT_FIELDS[field];
  return sql.includes(':owner') ? sql.replace(':owner', parameters.ownerSql()) : sql;
}

/** `%`, `_` and `\` of a value are matched literally. */
const likePattern = (value: string) => `%${value.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

/**
 * The WHERE condition of a search (without the instance), with its values bound through `bind`.
 * Text: `contains` is a case-insensitive substring; lists (labels, tags): `equals` / `contains` hold
 * when some element equals / contains the value (case-insensitive), their negations when none does.
 */
export function chatSearchCondition(search: Pick<ChatSearch, 'filters' | 'operator'>, parameters: SqlParameters): string {
  if (search.filters.length === 0) return 'TRUE';
  const bind = (value: unknown) => parameters.bind(value);
  const conditions = search.filters.map((filter) => {
    const { kind } = CHAT_FIELDS[filter.field];
    const sql = chatFieldSql(filter.field, parameters);
    if (kind === 'list') {
      const element =
        filter.comparison === 'contains' || filter.comparison === 'not_contains'
          ? `element ILIKE ${bind(likePattern(String(filter.value)))} ESCAPE '\\'`
          : `lower(element) = lower(${bind(String(filter.value))})`;
      const exists = `EXISTS (SELECT 1 FROM unnest(${sql}) AS element WHERE ${element})`;
      return filter.comparison === 'not_contains' || filter.comparison === 'not_equals' ? `NOT ${exists}` : exists;
    }
    if (filter.comparison === 'contains') return `${sql} ILIKE ${bind(likePattern(String(filter.value)))} ESCAPE '\\'`;
    if (filter.comparison === 'not_contains') return `${sql} NOT ILIKE ${bind(likePattern(String(filter.value)))} ESCAPE '\\'`;
    const cast = kind === 'number' ? '::numeric' : kind === 'boolean' ? '::boolean' : '::text';
    return `${sql} ${OPERATORS[filter.comparison]} ${bind(filter.value)}${cast}`;
  });
  return `(${conditions.join(search.operator === 'OR' ? ' OR ' : ' AND ')})`;
}
