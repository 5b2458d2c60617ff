import { RepositoryBase } from './repository-base';

/** What received voice notes said (`chatbot_transcripts`), by message id: the chatbot transcribes each once. */
export class ChatbotTranscriptRepository extends RepositoryBase {
  /** The stored transcripts of these messages (absent ones are not in the map). */
  async find(instanceId: string, messageIds: string[]): Promise<Map<string, string>> {
    if (!messageIds.length) return new Map();
    const rows: Array<{ message_id: string; text: string }> = await this.db.query(
      `SELECT message_id, text FROM chatbot_transcripts WHERE instance_id = $1 AND message_id = ANY($2::text[])`,
      [instanceId, messageIds],
    );
    return new Map(rows.map((row) => [row.message_id, row.text]));
  }

  /** Keeps a message's transcript (a second transcription of the same message keeps the first). */
  async store(instanceId: string, messageId: string, text: string): Promise<void> {
    await this.db.query(
      `INSERT INTO chatbot_transcripts (instance_id, message_id, text) VALUES ($1, $2, $3) ON CONFLICT (instance_id, message_id) DO NOTHING`,
      [instanceId, messageId, text],
    );
  }

  /** Deletes transcripts older than `days` (their messages are gone from the context by then). */
  async purge(days: number): Promise<number> {
    const rows: Array<{ n: string }> = await this.db.query(
      `WITH gone AS (DELETE FROM chatbot_transcripts WHERE created_at < now() - $1 * interval '1 day' RETURNING 1) SELECT count(*) AS n FROM gone`,
      [days],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
