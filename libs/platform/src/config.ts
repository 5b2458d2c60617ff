/**
 * Environment parsing: each app declares the variables it reads, parsed once at boot. A bad or missing
 * value stops the process with a message naming the variable. No other code reads process.env.
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`Invalid environment variable ${variable}: ${reason}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export class EnvReader {
  constructor(private readonly env: Env = process.env) {}

  string(name: string, fallback?: string): string {
    const raw = this.env[name];
    if (raw === undefined || raw === '') {
      if (fallback !== undefined) return fallback;
      throw new ConfigError(name, 'is required');
    }
    return raw;
  }

  optionalString(name: string): string | undefined {
    const raw = this.env[name];
    return raw === undefined || raw === '' ? undefined : raw;
  }

  integer(name: string, fallback: number, { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = {}): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(name, `must be an integer, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
    return value;
  }

  port(name: string, fallback: number): number {
    return this.integer(name, fallback, { min: 0, max: 65535 });
  }

  boolean(name: string, fallback: boolean): boolean {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    throw new ConfigError(name, `must be true or false, got "${raw}"`);
  }

  url(name: string, protocols: string[], fallback?: string): string | undefined {
    const raw = this.optionalString(name) ?? fallback;
    if (raw === undefined) return undefined;
    for (const part of raw.split(',')) {
      let parsed: URL;
      try {
        parsed = new URL(part.trim());
      } catch {
        throw new ConfigError(name, `must be a URL, got "${part}"`);
      }
      if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
    }
    return raw;
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!(values as readonly string[]).includes(raw)) throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  }

  /** Base64 of exactly `bytes` bytes. */
  base64(name: string, bytes: number): Buffer | undefined {
    const raw = this.optionalString(name);
    if (raw === undefined) return undefined;
    const decoded = Buffer.from(raw, 'base64');
    if (decoded.length !== bytes || decoded.toString('base64').replace(/=+$/, '') !== raw.replace(/=+$/, '')) {
      throw new ConfigError(name, `must be base64 of ${bytes} bytes`);
    }
    return decoded;
  }
}

/** Runs a config loader; on a ConfigError prints it and exits, as every app must at boot. */
export function loadConfigOrExit<T>(load: (env: EnvReader) => T, env: Env = process.env): T {
  try {
    return load(new EnvReader(env));
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: error.message, variable: error.variable })}\n`);
      process.exit(78);
    }
    throw error;
  }
}
