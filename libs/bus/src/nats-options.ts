/**
 * NATS_URL as the services read it: one or more server URLs, comma-separated (every server of a
 * cluster, so a client starts on any of them and knows where to go when its server dies), with the
 * credentials in the URL as operators write them: `nats://user:password@host:4222` or
 * `nats://token@host:4222`. The NATS client ignores credentials inside a server URL (a server with
 * authorization then refuses the connection), so they are taken out here and passed as options.
 */
export interface NatsServerOptions {
  servers: string[];
  user?: string;
  pass?: string;
  token?: string;
}

export function natsServerOptions(url: string): NatsServerOptions {
  const servers: string[] = [];
  let credentials: { user?: string; pass?: string; token?: string } | undefined;
  for (const part of url
    .split(',')
    .map((text) => text.trim())
    .filter(Boolean)) {
    const parsed = new URL(part);
    const found = parsed.username
      ? parsed.password
        ? { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) }
        : { token: decodeURIComponent(parsed.username) }
      : undefined;
    if (found) {
      if (credentials && JSON.stringify(credentials) !== JSON.stringify(found)) throw new Error('NATS_URL: every server must carry the same credentials');
      credentials = found;
    }
    servers.push(`${parsed.protocol}//${parsed.host}`);
  }
  if (servers.length === 0) throw new Error('NATS_URL: no server');
  return { servers, ...credentials };
}
