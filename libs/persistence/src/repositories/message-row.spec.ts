import { COLUMNS, messageDocument, type NewMessage, toMessageRow, toRecordRow } from './message-row';

/** A message whose every field has a value of its own, so that a field read from the wrong column shows. */
function distinctMessage(): NewMessage {
  const message: Record<string, unknown> = {};
  COLUMNS.forEach(([field], index) => (message[field] = `value ${index} of ${field}`));
  return { ...(message as unknown as NewMessage), isGroup: true, fromMe: false, messageTimestamp: 1_700_000_000_123, content: { a: 1 } };
}

/** The row Postgres would answer for `message` stored: every column by name, bigint as text, the two dates. */
function storedRow(message: NewMessage): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [field, column] of COLUMNS) row[column] = message[field];
  row.message_timestamp = String(message.messageTimestamp);
  row.created_at = new Date(1);
  row.updated_at = new Date(2);
  return row;
}

describe('message rows, written out field by field', () => {
  it('toMessageRow reads every column of COLUMNS into its field, in COLUMNS order, then the dates', () => {
    const message = distinctMessage();
    const row = toMessageRow(storedRow(message));
    expect(Object.keys(row)).toEqual([...COLUMNS.map(([field]) => field), 'createdAt', 'updatedAt']);
    expect(row).toEqual({ ...message, createdAt: new Date(1), updatedAt: new Date(2) });
    expect(row.messageTimestamp).toBe(1_700_000_000_123);
  });

  it('toRecordRow is toMessageRow without raw', () => {
    const stored = storedRow(distinctMessage());
    const record = toRecordRow(stored);
    const { raw: _raw, ...withoutRaw } = toMessageRow(stored);
    expect(Object.keys(record)).toEqual(Object.keys(withoutRaw));
    expect(record).toEqual(withoutRaw);
    expect('raw' in record).toBe(false);
  });

  it('a missing call peer or AI metadata reads as null', () => {
    const stored = storedRow(distinctMessage());
    delete stored.call_peer;
    delete stored.ai_metadata;
    expect(toMessageRow(stored)).toMatchObject({ callPeer: null, aiMetadata: null });
    expect(toRecordRow(stored)).toMatchObject({ callPeer: null, aiMetadata: null });
  });

  it('messageDocument names every column of COLUMNS, in order, with its field value, an absent one null', () => {
    const message = distinctMessage();
    const document = messageDocument(message);
    expect(Object.keys(document)).toEqual(COLUMNS.map(([, column]) => column));
    for (const [field, column] of COLUMNS) expect(document[column]).toBe(message[field]);
    const sparse = messageDocument({ ...message, raw: null, callPeer: undefined, aiMetadata: undefined });
    expect(sparse).toMatchObject({ raw: null, call_peer: null, ai_metadata: null });
  });

  it('a document read back as a row is the message again', () => {
    const message = distinctMessage();
    const document = messageDocument(message);
    const row = toMessageRow({ ...document, message_timestamp: String(document.message_timestamp), created_at: new Date(1), updated_at: new Date(2) });
    expect(row).toEqual({ ...message, createdAt: new Date(1), updatedAt: new Date(2) });
  });
});
