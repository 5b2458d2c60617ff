import { type Stack, waitFor } from './stack';

type Payload = Record<string, any>;

/** The payloads of the outbox events of a type (of one chat when given), in order. */
export const outboxPayloads = (stack: Stack, eventType: string, chatId?: string): Promise<Payload[]> =>
  stack.db.dataSource
    .query(
      chatId === undefined
        ? `SELECT payload FROM outbox_events WHERE event_type = $1 ORDER BY id`
        : `SELECT payload FROM outbox_events WHERE event_type = $1 AND chat_id = $2 ORDER BY id`,
      chatId === undefined ? [eventType] : [eventType, chatId],
    )
    .then((rows: Array<{ payload: Payload }>) => rows.map((row) => row.payload));

/** Waits for the first `groups` event of the group whose `event` matches, and answers its payload. */
export const groupsEventOf = (stack: Stack, groupJid: string, match: (event: Payload) => boolean, what: string, timeoutMs = 15_000): Promise<Payload> =>
  waitFor(
    () => outboxPayloads(stack, 'groups', groupJid),
    (list) => list.some((entry) => match(entry.event)),
    timeoutMs,
    what,
  ).then((list) => list.find((entry) => match(entry.event)) as Payload);
