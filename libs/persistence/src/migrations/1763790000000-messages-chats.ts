import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The message store, chats (with lead fields), contacts and the LID ↔ phone-number map. */
export class MessagesChats1763790000000 implements MigrationInterface {
  name = 'MessagesChats1763790000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE messages (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        id text NOT NULL,
        message_id text NOT NULL,
        chat_id text NOT NULL,
        chat_lid text NOT NULL DEFAULT '',
        sender text NOT NULL DEFAULT '',
        sender_pn text NOT NULL DEFAULT '',
        sender_lid text NOT NULL DEFAULT '',
        sender_name text NOT NULL DEFAULT '',
        is_group boolean NOT NULL DEFAULT false,
        from_me boolean NOT NULL DEFAULT false,
        message_type text NOT NULL DEFAULT '',
        type text NOT NULL DEFAULT '',
        media_type text NOT NULL DEFAULT '',
        source text NOT NULL DEFAULT '',
        message_timestamp bigint NOT NULL,
        status text NOT NULL DEFAULT '',
        text text NOT NULL DEFAULT '',
        quoted text NOT NULL DEFAULT '',
        edited text NOT NULL DEFAULT '',
        reaction text NOT NULL DEFAULT '',
        vote text NOT NULL DEFAULT '',
        convert_options text NOT NULL DEFAULT '',
        button_or_list_id text NOT NULL DEFAULT '',
        error text NOT NULL DEFAULT '',
        content jsonb,
        -- the whole WAMessage (BufferJSON), for media download and poll vote decryption
        raw text,
        was_sent_by_api boolean NOT NULL DEFAULT false,
        pinned boolean NOT NULL DEFAULT false,
        send_function text NOT NULL DEFAULT '',
        send_payload jsonb,
        file_url text NOT NULL DEFAULT '',
        send_folder_id text NOT NULL DEFAULT '',
        track_source text NOT NULL DEFAULT '',
        track_id text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, id),
        UNIQUE (instance_id, message_id)
      )`);
    await runner.query(`CREATE INDEX messages_chat ON messages (instance_id, chat_id, message_timestamp DESC)`);
    await runner.query(`CREATE INDEX messages_track ON messages (instance_id, track_source, track_id) WHERE track_id <> ''`);
    await runner.query(`CREATE INDEX messages_status ON messages (instance_id, status)`);
    await runner.query(`CREATE INDEX messages_created ON messages (created_at)`);

    await runner.query(`
      CREATE TABLE chats (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        id text NOT NULL,
        -- phone-number JID (or group/newsletter JID) and LID of the same conversation
        wa_chatid text NOT NULL DEFAULT '',
        wa_chatlid text NOT NULL DEFAULT '',
        name text NOT NULL DEFAULT '',
        wa_name text NOT NULL DEFAULT '',
        wa_contact_name text NOT NULL DEFAULT '',
        image text NOT NULL DEFAULT '',
        image_preview text NOT NULL DEFAULT '',
        is_group boolean NOT NULL DEFAULT false,
        group_flags jsonb NOT NULL DEFAULT '{}'::jsonb,
        archived boolean NOT NULL DEFAULT false,
        pinned boolean NOT NULL DEFAULT false,
        blocked boolean NOT NULL DEFAULT false,
        mute_end_time bigint NOT NULL DEFAULT 0,
        unread_count integer NOT NULL DEFAULT 0,
        ephemeral_expiration integer NOT NULL DEFAULT 0,
        labels text[] NOT NULL DEFAULT '{}',
        notes text NOT NULL DEFAULT '',
        last_msg_timestamp bigint NOT NULL DEFAULT 0,
        last_message_type text NOT NULL DEFAULT '',
        last_message_text_vote text NOT NULL DEFAULT '',
        last_message_sender text NOT NULL DEFAULT '',
        lead jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, id)
      )`);
    // One conversation, one row: neither its phone JID nor its LID may appear twice.
    await runner.query(`CREATE UNIQUE INDEX chats_chatid ON chats (instance_id, wa_chatid) WHERE wa_chatid <> ''`);
    await runner.query(`CREATE UNIQUE INDEX chats_chatlid ON chats (instance_id, wa_chatlid) WHERE wa_chatlid <> ''`);
    await runner.query(`CREATE INDEX chats_recent ON chats (instance_id, last_msg_timestamp DESC)`);

    await runner.query(`
      CREATE TABLE contacts (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        jid text NOT NULL,
        lid text NOT NULL DEFAULT '',
        -- name saved in the address book, profile (push) name, verified business name
        contact_name text NOT NULL DEFAULT '',
        push_name text NOT NULL DEFAULT '',
        verified_name text NOT NULL DEFAULT '',
        in_address_book boolean NOT NULL DEFAULT false,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, jid)
      )`);

    await runner.query(`
      CREATE TABLE lid_mappings (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        lid text NOT NULL,
        pn text NOT NULL,
        PRIMARY KEY (instance_id, lid)
      )`);
    await runner.query(`CREATE INDEX lid_mappings_pn ON lid_mappings (instance_id, pn)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['lid_mappings', 'contacts', 'chats', 'messages']) await runner.query(`DROP TABLE IF EXISTS ${table}`);
  }
}
