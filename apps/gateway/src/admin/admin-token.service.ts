import { Inject, Injectable } from '@nestjs/common';
import { SettingsRepository } from '@gw/persistence';
import { type Logger, secretsEqual, sha256Hex } from '@gw/platform';
import { randomInt } from 'node:crypto';
import { LOGGER } from '../runtime/tokens';

const HASH_KEY = 'admin_token_sha256';
const ROTATED_KEY = 'admin_token_rotated_at';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * The operator's token. Only its SHA-256 is stored; every check reads it from Postgres so that a
 * rotation on one gateway replica takes effect on all of them at once.
 */
@Injectable()
export class AdminTokenService {
  constructor(
    private readonly settings: SettingsRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * At start: ADMIN_TOKEN from the environment wins until the token is rotated through the API;
   * with none configured or stored, one is generated, stored, and returned to be printed once.
   */
  async initialise(fromEnvironment: string | undefined): Promise<{ generated?: string }> {
    const rotatedAt = await this.settings.get(ROTATED_KEY);
    if (fromEnvironment) {
      if (rotatedAt) {
        this.logger.warn({ rotatedAt }, 'ADMIN_TOKEN is ignored: the admin token was rotated through the API since');
        return {};
      }
      await this.settings.set(HASH_KEY, sha256Hex(fromEnvironment));
      return {};
    }
    if (await this.settings.get(HASH_KEY)) return {};
    const token = generateAdminToken();
    const stored = await this.settings.setIfAbsent(HASH_KEY, sha256Hex(token));
    // Another replica may have won the race; then its token stands and ours was never valid.
    return stored === sha256Hex(token) ? { generated: token } : {};
  }

  async verify(candidate: string | undefined): Promise<boolean> {
    if (!candidate) return false;
    const stored = await this.settings.get(HASH_KEY);
    if (!stored) return false;
    return secretsEqual(sha256Hex(candidate), stored);
  }

  async rotate(): Promise<{ token: string; rotatedAt: number }> {
    const token = generateAdminToken();
    const rotatedAt = Date.now();
    await this.settings.set(HASH_KEY, sha256Hex(token));
    await this.settings.set(ROTATED_KEY, String(rotatedAt));
    return { token, rotatedAt };
  }
}

/** 50 alphanumeric characters (~297 bits), the shape the API documents. */
export function generateAdminToken(): string {
  let token = '';
  for (let i = 0; i < 50; i++) token += ALPHABET[randomInt(ALPHABET.length)];
  return token;
}
