import { ConfigError, type EnvReader, LOG_FORMATS, type LogFormat, type MetricsConfig, readMetricsConfig, SsrfGuard } from '@gw/platform';
import { parsePaymentLinkDomains } from './payment-link-domains';
import { parseRateLimit, type RateLimit } from '../common/rate-limit';
import { readManagedProxyPools, type ManagedProxy } from './managed-proxy-pools';

export interface GatewayConfig {
  port: number;
  host: string;
  /** Absent: embedded Postgres with data under `dataDir`. */
  databaseUrl?: string;
  /** Absent: the embedded default — all four services in this process over the in-process bus. */
  natsUrl?: string;
  dataDir: string;
  embeddedPostgresPort: number;
  adminToken?: string;
  logLevel: string;
  /** `json` lines for machines (default), `pretty` for people (LOG_FORMAT). */
  logFormat: LogFormat;
  /** How long the gateway waits for a session worker's answer. */
  rpcTimeoutMs: number;
  /** How long a connect may wait for the first QR / pairing code. */
  connectTimeoutMs: number;
  /**
   * How long a sync send waits for another worker to take an instance over when its holder died
   * (FAILOVER_WAIT_MS): the lease TTL, a reconcile interval and a reconnect.
   */
  failoverWaitMs: number;
  /**
   * After SIGTERM, how long the gateway keeps serving with `/ready` answering 503 before it stops
   * accepting (DRAIN_DELAY_MS, default 0): time for a load balancer that polls `/ready` to stop sending
   * here. Kubernetes' preStop sleep does that job there (k8s/gateway.yaml).
   */
  drainDelayMs: number;
  /** Sandbox: an embedded simulator, and the workers wired to it. */
  sandbox: boolean;
  /** CIDRs the SSRF guard lets through although they are private (SSRF_ALLOWLIST). */
  ssrfAllowlist: string[];
  /**
   * The proxies in front of the gateway whose `X-Forwarded-For` is believed (TRUST_PROXY: addresses or CIDRs,
   * comma-separated; empty: none, the socket's peer is the client). The client's address is then the last
   * one a trusted proxy added: what RATE_LIMIT_UNAUTHENTICATED counts and the audit log records.
   */
  trustProxy: string[];
  /** Where clients reach this gateway (`BaseUrl` of event envelopes). */
  publicBaseUrl: string;
  /** SSE heartbeat comment interval. */
  sseHeartbeatMs: number;
  /** How long an SSE client may leave what is buffered for it unread before it is dropped (SSE_SLOW_CLIENT_MS). */
  sseSlowClientMs: number;
  /** Checkout domains a payment request's paymentLink may use (PAYMENT_LINK_DOMAINS; subdomains included). */
  paymentLinkDomains: string[];
  /** The operator's managed proxy pools by country, state and city (PROXY_MANAGED_POOLS, or the JSON file PROXY_MANAGED_FILE). */
  managedProxies: ManagedProxy[];
  /** Requests per token, per replica (RATE_LIMIT_INSTANCE, RATE_LIMIT_ADMIN, RATE_LIMIT_UNAUTHENTICATED per client IP); absent: off. */
  rateLimits: { instance?: RateLimit; admin?: RateLimit; unauthenticated?: RateLimit };
  /** GET /metrics: its bearer token (METRICS_TOKEN) and whether sends and connects carry the instance id (METRICS_PER_INSTANCE). */
  metrics: MetricsConfig;
  /** Where the operator console's build is (CONSOLE_DIR); absent: beside the gateway's bundle (dist/apps/manager). */
  consoleDir?: string;
  /** `/message/download`'s `transcribe`: OpenAI's base URL (OPENAI_BASE_URL, '' for OpenAI's own) and model (CHATBOT_TRANSCRIPTION_MODEL), as the chatbot's. */
  transcription?: { openaiBaseUrl: string; model: string };
}

export function loadGatewayConfig(env: EnvReader, argv: string[] = process.argv): GatewayConfig {
  const sandbox = argv.includes('--sandbox') || env.boolean('SANDBOX', false);
  return {
    port: env.port('PORT', 8080),
    host: env.string('HOST', '0.0.0.0'),
    databaseUrl: env.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    natsUrl: env.url('NATS_URL', ['nats:', 'tls:']),
    // The sandbox keeps its own data (its database, its simulator's phones) apart from `npm start`'s.
    dataDir: env.string('DATA_DIR', sandbox ? './.data/sandbox' : './.data'),
    embeddedPostgresPort: env.port('EMBEDDED_POSTGRES_PORT', sandbox ? 54339 : 54329),
    adminToken: adminToken(env),
    logLevel: env.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    logFormat: env.oneOf('LOG_FORMAT', LOG_FORMATS, 'json'),
    rpcTimeoutMs: env.integer('RPC_TIMEOUT_MS', 15000, { min: 100, max: 600000 }),
    connectTimeoutMs: env.integer('CONNECT_TIMEOUT_MS', 30000, { min: 100, max: 600000 }),
    failoverWaitMs: env.integer('FAILOVER_WAIT_MS', 20000, { min: 0, max: 600000 }),
    drainDelayMs: env.integer('DRAIN_DELAY_MS', 0, { min: 0, max: 60_000 }),
    sandbox,
    ssrfAllowlist: cidrList(env, 'SSRF_ALLOWLIST'),
    trustProxy: cidrList(env, 'TRUST_PROXY'),
    transcription: {
      openaiBaseUrl: (env.url('OPENAI_BASE_URL', ['http:', 'https:']) ?? '').replace(/\/+$/, ''),
      model: env.string('CHATBOT_TRANSCRIPTION_MODEL', 'whisper-1'),
    },
    publicBaseUrl: env.url('PUBLIC_BASE_URL', ['http:', 'https:'], `http://localhost:${env.port('PORT', 8080)}`) as string,
    sseHeartbeatMs: env.integer('SSE_HEARTBEAT_MS', 15_000, { min: 100, max: 300_000 }),
    sseSlowClientMs: env.integer('SSE_SLOW_CLIENT_MS', 30_000, { min: 100, max: 600_000 }),
    paymentLinkDomains: paymentLinkDomains(env),
    managedProxies: readManagedProxyPools(env),
    rateLimits: {
      instance: rateLimit(env, 'RATE_LIMIT_INSTANCE', '100/s,burst=200'),
      admin: rateLimit(env, 'RATE_LIMIT_ADMIN', '20/s,burst=100'),
      unauthenticated: rateLimit(env, 'RATE_LIMIT_UNAUTHENTICATED', '10/s,burst=50'),
    },
    metrics: readMetricsConfig(env),
    consoleDir: env.optionalString('CONSOLE_DIR'),
  };
}

/** `20/s,burst=40`, `600/m`, or `0`/`off` (see common/rate-limit.ts), checked at boot. */
function rateLimit(env: EnvReader, name: string, fallback: string): RateLimit | undefined {
  try {
    return parseRateLimit(env.string(name, fallback));
  } catch (error) {
    throw new ConfigError(name, (error as Error).message);
  }
}

/** Values that ship in examples and manifests (k8s/secret.yaml says CHANGE_ME): never a real token. */
const PLACEHOLDER_TOKEN = /change[\s_-]*me|replace[\s_-]*me|placeholder|example|your[\s_-]*(admin[\s_-]*)?token|^(.)\2*$/i;
export const MIN_ADMIN_TOKEN_LENGTH = 32;

/** ADMIN_TOKEN opens every instance: a short or placeholder value stops the gateway at boot. */
function adminToken(env: EnvReader): string | undefined {
  const token = env.optionalString('ADMIN_TOKEN');
  if (token === undefined) return undefined;
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(
      'ADMIN_TOKEN',
      `must have at least ${MIN_ADMIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32), or be unset to have one generated`,
    );
  }
  if (PLACEHOLDER_TOKEN.test(token)) throw new ConfigError('ADMIN_TOKEN', 'is a placeholder; set a random value (e.g. openssl rand -hex 32)');
  return token;
}

function paymentLinkDomains(env: EnvReader): string[] {
  try {
    return parsePaymentLinkDomains(env.optionalString('PAYMENT_LINK_DOMAINS'));
  } catch (error) {
    throw new ConfigError('PAYMENT_LINK_DOMAINS', (error as Error).message);
  }
}

/** A comma list of CIDRs, checked at boot so a typo stops the process with the variable's name. */
export function cidrList(env: EnvReader, name: string): string[] {
  const list = (env.optionalString(name) ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  try {
    new SsrfGuard(list);
  } catch (error) {
    throw new ConfigError(name, (error as Error).message.replace(/^SSRF_ALLOWLIST: /, ''));
  }
  return list;
}
