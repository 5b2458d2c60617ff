import type { Logger } from '@gw/platform';
import { DEFAULT_CONNECTION_CONFIG, type WAVersion } from '../baileys';

/** Where web.whatsapp.com publishes its current version (Baileys' fetchLatestWaWebVersion reads it too). */
export const WA_WEB_SW_URL = 'https://web.whatsapp.com/sw.js';

/** `"client_revision":N` as sw.js carries it, escaped or not (Baileys' fetchLatestWaWebVersion; whatsmeow's GetLatestVersion). */
const CLIENT_REVISION = /\\?"client_revision\\?":\s*(\d+)/;

/** "2.3000.1043857761" → [2, 3000, 1043857761]; undefined unless three non-negative integers. */
export function parseWaVersion(text: string): WAVersion | undefined {
  const parts = text.trim().split('.');
  if (parts.length !== 3 || !parts.every((part) => /^\d{1,10}$/.test(part))) return undefined;
  return parts.map(Number) as WAVersion;
}

export function formatWaVersion(version: WAVersion): string {
  return version.join('.');
}

function newer(a: WAVersion, b: WAVersion): boolean {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}

export interface WaVersionOptions {
  /** WA_WEB_VERSION: the version to log in with from the start (else Baileys' built-in one). */
  configured?: WAVersion;
  /** WA_VERSION_URL: a page carrying `"client_revision":N` as web.whatsapp.com/sw.js does. */
  url?: string;
  timeoutMs?: number;
}

/**
 * The WhatsApp Web version this worker's sockets log in with. WhatsApp refuses an outdated one at
 * login with `<failure reason="405">` and says nothing of the current one (Baileys issues #1634,
 * #1937; whatsmeow only emits ClientOutdated), so on a 405 the version is learnt again from the
 * configured page. One lookup at a time serves every session that was refused meanwhile.
 */
export class WaVersionSource {
  private current: WAVersion;
  private lookup: Promise<WAVersion | undefined> | null = null;

  constructor(private readonly options: WaVersionOptions) {
    this.current = options.configured ?? (DEFAULT_CONNECTION_CONFIG.version as WAVersion);
  }

  /** The version a socket opened now logs in with. */
  get version(): WAVersion {
    return this.current;
  }

  /**
   * `used` was refused as outdated: the newest version known (looked up now) when it is newer than
   * `used`, else undefined (the refusal stands until the published version moves).
   */
  async newerThan(used: WAVersion, logger: Logger): Promise<WAVersion | undefined> {
    if (newer(this.current, used)) return this.current;
    this.lookup ??= this.fetchPublished(logger).finally(() => (this.lookup = null));
    const published = await this.lookup;
    if (published && newer(published, this.current)) {
      logger.info({ from: formatWaVersion(this.current), to: formatWaVersion(published) }, 'WhatsApp Web version updated');
      this.current = published;
    }
    return newer(this.current, used) ? this.current : undefined;
  }

  private async fetchPublished(logger: Logger): Promise<WAVersion | undefined> {
    const { url, timeoutMs = 10_000 } = this.options;
    if (!url) return undefined;
    try {
      // The headers web.whatsapp.com wants before it serves sw.js to a script (Baileys' fetchLatestWaWebVersion).
      const response = await fetch(url, {
        headers: {
          'sec-fetch-site': 'none',
          'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
        },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const revision = CLIENT_REVISION.exec(await response.text())?.[1];
      if (!revision) throw new Error('no client_revision in the page');
      return [2, 3000, Number(revision)];
    } catch (error) {
      logger.warn({ err: error, url }, 'looking up the current WhatsApp Web version failed');
      return undefined;
    }
  }
}
