import { RepositoryBase } from './repository-base';

export class SettingsRepository extends RepositoryBase {
  async get(key: string): Promise<string | null> {
    const rows: Array<{ value: string }> = await this.db.query(`SELECT value FROM settings WHERE key = $1`, [key]);
    return rows.length ? rows[0].value : null;
  }

  async set(key: string, value: string): Promise<void> {
    await this.db.query(`INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [key, value]);
  }

  /** Stores the value only if the key is absent; returns what is stored afterwards. */
  async setIfAbsent(key: string, value: string): Promise<string> {
    await this.db.query(`INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [key, value]);
    return (await this.get(key)) as string;
  }
}
