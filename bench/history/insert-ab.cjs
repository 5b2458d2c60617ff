#!/usr/bin/env node
// bench/history's statement A/B (issue #38): a history chunk's insert (1,000 rows, as MessageRepository sends
// them: one JSON document read with jsonb_populate_recordset) in several shapes, each in its own transaction
// with its commit, alternating, into a scratch copy of `messages` (its indexes and the record-id trigger of
// migration 1764490000000; dropped after). Prints the median and mean per shape.
//   node bench/history/insert-ab.cjs [rounds=30] [shape…]   (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
const { Client } = require('pg');
const { performance } = require('node:perf_hooks');

const COLUMNS = [
  'instance_id',
  'id',
  'message_id',
  'chat_id',
  'chat_lid',
  'sender',
  'sender_pn',
  'sender_lid',
  'sender_name',
  'is_group',
  'from_me',
  'message_type',
  'type',
  'media_type',
  'source',
  'message_timestamp',
  'status',
  'text',
  'quoted',
  'edited',
  'reaction',
  'vote',
  'convert_options',
  'button_or_list_id',
  'error',
  'content',
  'raw',
  'was_sent_by_api',
  'pinned',
  'send_function',
  'send_payload',
  'file_url',
  'send_folder_id',
  'track_source',
  'track_id',
  'call_peer',
  'ai_metadata',
];
const INSERT = `INSERT INTO messages (${COLUMNS.join(', ')}) SELECT ${COLUMNS.map((c) => `input.${c}`).join(', ')} FROM jsonb_populate_recordset(NULL::messages, $1::jsonb) AS input`;
const ON_CONFLICT = `${INSERT} ON CONFLICT (instance_id, message_id) DO NOTHING`;
const ours = (returning) => `WITH inserted AS (${ON_CONFLICT} RETURNING ${returning}) SELECT * FROM inserted`;
const SHAPES = {
  // insertNew: every column back.
  returnAll: { sql: ours('*'), slices: 2 },
  returnAllOneSlice: { sql: ours('*'), slices: 1 },
  // insertNewKeys: what the table chose.
  returnKeys: { sql: ours('messages.message_id, messages.id, messages.created_at, messages.updated_at'), slices: 2 },
  returnAllNoTrigger: { sql: ours('*'), slices: 2, noTrigger: true },
  // The floor's shape: no conflict check, nothing back.
  plain: { sql: INSERT, slices: 1 },
  plainNoTrigger: { sql: INSERT, slices: 1, noTrigger: true },
};
const rounds = Number(process.argv[2] ?? 30);
const chosen = process.argv.length > 3 ? process.argv.slice(3) : Object.keys(SHAPES);

let made = 0;
/** `count` rows of a history's text messages (record ids unique, so no shape pays the trigger's retry). */
function document(count) {
  const rows = [];
  for (let i = 0; i < count; i++, made++) {
    const id = `3EB0H${String(made).padStart(12, '0')}`;
    const chat = `55398${String(made % 1000).padStart(7, '0')}@s.whatsapp.net`;
    const text = `history message ${made} ${'x'.repeat(20 + (made % 40))}`;
    const raw = JSON.stringify({
      key: { remoteJid: chat, fromMe: made % 2 === 1, id },
      message: { conversation: text },
      messageTimestamp: 1764700000 + made,
      status: 4,
      pushName: 'Someone',
    });
    rows.push({
      instance_id: 'rinsertab',
      id: `r${made.toString(16).padStart(7, '0')}`,
      message_id: id,
      chat_id: chat,
      chat_lid: chat.replace('55398', '19398').replace('s.whatsapp.net', 'lid'),
      sender: '',
      sender_pn: '',
      sender_lid: '',
      sender_name: '',
      is_group: false,
      from_me: made % 2 === 1,
      message_type: 'conversation',
      type: 'text',
      media_type: '',
      source: 'unknown',
      message_timestamp: 1764700000 + made,
      status: 'Read',
      text,
      quoted: '',
      edited: '',
      reaction: '',
      vote: '',
      convert_options: '',
      button_or_list_id: '',
      error: '',
      content: { text },
      raw,
      was_sent_by_api: false,
      pinned: false,
      send_function: '',
      send_payload: null,
      file_url: '',
      send_folder_id: '',
      track_source: '',
      track_id: '',
      call_peer: null,
      ai_metadata: null,
    });
  }
  return JSON.stringify(rows);
}

(async () => {
  const client = new Client({ connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' });
  await client.connect();
  const schema = `insert_ab_${process.pid}`;
  await client.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.messages (LIKE public.messages INCLUDING ALL); SET search_path = ${schema}, public;
    CREATE TRIGGER messages_fresh_taken_id BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION public.messages_fresh_taken_id()`);
  const times = Object.fromEntries(chosen.map((name) => [name, []]));
  try {
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 ? [...chosen].reverse() : chosen) {
        const shape = SHAPES[name];
        if (shape.noTrigger) await client.query('ALTER TABLE messages DISABLE TRIGGER messages_fresh_taken_id');
        const parts = Array.from({ length: shape.slices }, () => document(1000 / shape.slices));
        const t0 = performance.now();
        await client.query('BEGIN');
        for (const part of parts) await client.query({ name, text: shape.sql, values: [part] });
        await client.query('COMMIT');
        times[name].push(performance.now() - t0);
        if (shape.noTrigger) await client.query('ALTER TABLE messages ENABLE TRIGGER messages_fresh_taken_id');
      }
    }
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
    await client.end();
  }
  for (const [name, list] of Object.entries(times)) {
    const sorted = [...list].sort((a, b) => a - b);
    const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
    process.stdout.write(
      `${name.padEnd(20)} ${sorted.length} rounds: median ${sorted[sorted.length >> 1].toFixed(1)} ms, mean ${mean.toFixed(1)} ms per 1,000 rows\n`,
    );
  }
})();
