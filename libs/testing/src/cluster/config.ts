/**
 * `npm run cluster` (issue #39): the configuration of a whole deployment on loopback, as pure
 * functions of a base port, a run directory and the secrets — no process is started here (cluster.ts
 * does that), so a unit spec can read what would run.
 *
 * Topology: three NATS servers with JetStream in one cluster (routes on loopback, user/password on
 * clients and routes); one etcd; two Patroni nodes (a Postgres primary and a synchronous streaming
 * standby); HAProxy in front of them, routing to whichever node answers Patroni's `GET /primary` with
 * 200; the WhatsApp simulator; then 2 gateways, 3 session workers, 2 dispatchers and 2 webhook relays
 * from the built dist, every service given all three NATS URLs and HAProxy's address.
 */
import { join } from 'node:path';

export const PG_BIN_DIR = '/usr/lib/postgresql/15/bin';

export interface ClusterSecrets {
  /** The NATS clients' user `gw`. */
  natsPassword: string;
  /** The routes between the NATS servers (user `route`). */
  natsRoutePassword: string;
  postgresPassword: string;
  replicationPassword: string;
  /** The services' own role `gateway` (owner of the database `gateway`). */
  appPassword: string;
  /** The gateways' ADMIN_TOKEN. */
  adminToken: string;
}

export interface ClusterCounts {
  gateways: number;
  workers: number;
  dispatchers: number;
  relays: number;
}

export const DEFAULT_COUNTS: ClusterCounts = { gateways: 2, workers: 3, dispatchers: 2, relays: 2 };

export interface ClusterOptions {
  /** Where configs, data, logs and the state file go (e.g. `<repo>/.cluster`). */
  runDir: string;
  /** The repository root (the built services are under `dist/`). */
  repoRoot: string;
  /** Every port is this plus a fixed offset (see `clusterPorts`). */
  basePort: number;
  secrets: ClusterSecrets;
  counts?: ClusterCounts;
  /** Extra environment for every service (a bench's tunings, SSRF_ALLOWLIST…). */
  serviceEnv?: Record<string, string>;
  /** Where the built services are (default `<repoRoot>/dist`). */
  distDir?: string;
  /** The simulator's websocket URL and root public key (base64), known once it runs: the workers' seam. */
  sim?: { websocketUrl: string; rootPublicKey: string };
}

export interface ClusterPorts {
  nats: Array<{ client: number; cluster: number; monitor: number }>;
  etcd: { client: number; peer: number };
  postgres: Array<{ pg: number; rest: number }>;
  haproxy: { pg: number; stats: number };
  sim: { ws: number; control: number };
  gateways: number[];
  workers: number[];
  dispatchers: number[];
  relays: number[];
}

const range = (count: number, from: number) => Array.from({ length: count }, (_, i) => from + i);

/** Fixed offsets from the base port, so two runs with bases 100 apart never meet. */
export function clusterPorts(basePort: number, counts: ClusterCounts = DEFAULT_COUNTS): ClusterPorts {
  if (!Number.isInteger(basePort) || basePort < 1024 || basePort + 200 > 65535) throw new Error(`base port must be 1024–65335, got ${basePort}`);
  for (const [name, count] of Object.entries(counts)) if (count < 1 || count > 9) throw new Error(`${name} must be 1–9, got ${count}`);
  return {
    nats: range(3, 0).map((i) => ({ client: basePort + 10 + i, cluster: basePort + 20 + i, monitor: basePort + 30 + i })),
    etcd: { client: basePort + 40, peer: basePort + 41 },
    postgres: range(2, 0).map((i) => ({ pg: basePort + 50 + i, rest: basePort + 60 + i })),
    haproxy: { pg: basePort + 70, stats: basePort + 71 },
    sim: { ws: basePort + 80, control: basePort + 81 },
    gateways: range(counts.gateways, basePort + 100),
    workers: range(counts.workers, basePort + 110),
    dispatchers: range(counts.dispatchers, basePort + 120),
    relays: range(counts.relays, basePort + 130),
  };
}

/** One process of the cluster: how to start it again (the bench restarts them) and how to tell it is up. */
export interface ComponentSpec {
  /** Unique: `nats-1`, `pg-2`, `gateway-1`, `worker-3`… */
  name: string;
  kind: 'nats' | 'etcd' | 'patroni' | 'haproxy' | 'sim' | 'gateway' | 'worker' | 'dispatcher' | 'relay';
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Files written before the start (configs), path → content. */
  files: Record<string, string>;
  /** An HTTP URL that answers 2xx once the process is ready. */
  healthUrl: string;
  /** Where it listens, for the table. */
  listens: string;
  /** Run as the `postgres` system user when we are root (Postgres refuses to run as root). */
  asPostgresUser?: boolean;
}

/** The URL every service gets: all three servers, with the clients' credentials. */
export function natsUrl(ports: ClusterPorts, secrets: ClusterSecrets): string {
  return ports.nats.map((n) => `nats://gw:${encodeURIComponent(secrets.natsPassword)}@127.0.0.1:${n.client}`).join(',');
}

/** The services' DATABASE_URL: HAProxy, which routes to the current primary. */
export function databaseUrl(ports: ClusterPorts, secrets: ClusterSecrets, user = 'gateway', database = 'gateway'): string {
  const password = user === 'postgres' ? secrets.postgresPassword : secrets.appPassword;
  return `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${ports.haproxy.pg}/${database}`;
}

/** A quoted string in NATS's configuration syntax. */
const natsString = (value: string) => JSON.stringify(value);

export function natsServerConfig(index: number, ports: ClusterPorts, secrets: ClusterSecrets, runDir: string): string {
  const me = ports.nats[index];
  const routes = ports.nats
    .filter((_, i) => i !== index)
    .map((n) => `    nats-route://route:${encodeURIComponent(secrets.natsRoutePassword)}@127.0.0.1:${n.cluster}`);
  return [
    `server_name: ${natsString(`nats-${index + 1}`)}`,
    `listen: "127.0.0.1:${me.client}"`,
    `http: "127.0.0.1:${me.monitor}"`,
    `jetstream {`,
    `  store_dir: ${natsString(join(runDir, 'nats', `nats-${index + 1}`))}`,
    `  max_memory_store: 64MB`,
    `  max_file_store: 1GB`,
    `}`,
    `authorization {`,
    `  user: "gw"`,
    `  password: ${natsString(secrets.natsPassword)}`,
    `}`,
    `cluster {`,
    `  name: "gw-cluster"`,
    `  listen: "127.0.0.1:${me.cluster}"`,
    `  authorization {`,
    `    user: "route"`,
    `    password: ${natsString(secrets.natsRoutePassword)}`,
    `  }`,
    `  routes: [`,
    ...routes,
    `  ]`,
    `}`,
    '',
  ].join('\n');
}

export function etcdArgs(ports: ClusterPorts, runDir: string): string[] {
  const client = `http://127.0.0.1:${ports.etcd.client}`;
  const peer = `http://127.0.0.1:${ports.etcd.peer}`;
  return [
    '--name',
    'etcd-1',
    '--data-dir',
    join(runDir, 'etcd'),
    '--listen-client-urls',
    client,
    '--advertise-client-urls',
    client,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    `etcd-1=${peer}`,
    '--initial-cluster-state',
    'new',
    '--initial-cluster-token',
    'gw-cluster',
  ];
}

/** A YAML scalar: JSON strings are valid YAML. */
const y = (value: string) => JSON.stringify(value);

/**
 * One Patroni node. Synchronous mode: a commit returns once the standby has it, so a promotion loses
 * nothing acknowledged. ttl 20 s (Patroni's least), loop 2 s: a dead leader's key lapses within 20 s
 * and the standby takes it at its next loop. pg_rewind lets the old primary come back as a standby.
 */
export function patroniConfig(index: number, ports: ClusterPorts, secrets: ClusterSecrets, runDir: string): string {
  const me = ports.postgres[index];
  const dir = join(runDir, 'pg', `pg-${index + 1}`);
  return [
    `scope: gw-cluster`,
    `namespace: /service/`,
    `name: ${y(`pg-${index + 1}`)}`,
    `log:`,
    `  level: WARNING`,
    `restapi:`,
    `  listen: ${y(`127.0.0.1:${me.rest}`)}`,
    `  connect_address: ${y(`127.0.0.1:${me.rest}`)}`,
    `etcd3:`,
    `  hosts: ${y(`127.0.0.1:${ports.etcd.client}`)}`,
    `bootstrap:`,
    `  dcs:`,
    `    ttl: 20`,
    `    loop_wait: 2`,
    `    retry_timeout: 5`,
    `    maximum_lag_on_failover: 1048576`,
    `    synchronous_mode: true`,
    `    postgresql:`,
    `      use_pg_rewind: true`,
    `      use_slots: true`,
    `      parameters:`,
    `        max_connections: 400`,
    `        wal_level: replica`,
    `        hot_standby: "on"`,
    `        wal_log_hints: "on"`,
    `        max_wal_senders: 10`,
    `        max_replication_slots: 10`,
    `        synchronous_commit: "on"`,
    `        shared_buffers: 128MB`,
    // What the statements cost (pg_stat_statements), as a production server keeps it: bench/cluster reads it per round.
    `        shared_preload_libraries: pg_stat_statements`,
    `        pg_stat_statements.track_planning: "on"`,
    `  initdb:`,
    `    - encoding: UTF8`,
    `    - data-checksums`,
    `  pg_hba:`,
    `    - host replication replicator 127.0.0.1/32 scram-sha-256`,
    `    - host all all 127.0.0.1/32 scram-sha-256`,
    `    - local all all trust`,
    `postgresql:`,
    `  listen: ${y(`127.0.0.1:${me.pg}`)}`,
    `  connect_address: ${y(`127.0.0.1:${me.pg}`)}`,
    `  data_dir: ${y(join(dir, 'data'))}`,
    `  bin_dir: ${y(PG_BIN_DIR)}`,
    `  pgpass: ${y(join(dir, 'pgpass'))}`,
    `  remove_data_directory_on_rewind_failure: true`,
    `  authentication:`,
    `    superuser:`,
    `      username: postgres`,
    `      password: ${y(secrets.postgresPassword)}`,
    `    replication:`,
    `      username: replicator`,
    `      password: ${y(secrets.replicationPassword)}`,
    `    rewind:`,
    `      username: postgres`,
    `      password: ${y(secrets.postgresPassword)}`,
    `  parameters:`,
    `    unix_socket_directories: ${y(dir)}`,
    `tags:`,
    `  nofailover: false`,
    `  noloadbalance: false`,
    `  clonefrom: false`,
    '',
  ].join('\n');
}

/**
 * HAProxy: one TCP frontend for Postgres; a node is up only while Patroni's REST API answers
 * `/primary` with 200, and the sessions of a node marked down are cut at once, so clients reconnect
 * (to the new primary) instead of writing into a demoted or dead server.
 */
export function haproxyConfig(ports: ClusterPorts): string {
  return [
    'global',
    '  maxconn 2000',
    'defaults',
    '  mode tcp',
    '  timeout connect 2s',
    '  timeout client 30m',
    '  timeout server 30m',
    '  timeout check 1s',
    'listen postgres',
    `  bind 127.0.0.1:${ports.haproxy.pg}`,
    '  option httpchk GET /primary',
    '  http-check expect status 200',
    '  default-server inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions',
    ...ports.postgres.map((p, i) => `  server pg-${i + 1} 127.0.0.1:${p.pg} check port ${p.rest}`),
    'listen stats',
    '  mode http',
    `  bind 127.0.0.1:${ports.haproxy.stats}`,
    '  timeout client 10s',
    '  timeout server 10s',
    '  stats enable',
    '  stats uri /stats',
    '  http-request return status 200 content-type text/plain string ok if { path /health }',
    '',
  ].join('\n');
}

/** Every process of the cluster, in start order (a later one needs the earlier ones up). */
export function clusterPlan(options: ClusterOptions): ComponentSpec[] {
  const counts = options.counts ?? DEFAULT_COUNTS;
  const ports = clusterPorts(options.basePort, counts);
  const { runDir, repoRoot, secrets } = options;
  const specs: ComponentSpec[] = [];
  const dist = (path: string) => join(options.distDir ?? join(repoRoot, 'dist'), path);

  ports.nats.forEach((n, i) => {
    const file = join(runDir, 'nats', `nats-${i + 1}.conf`);
    specs.push({
      name: `nats-${i + 1}`,
      kind: 'nats',
      command: '/usr/sbin/nats-server',
      args: ['-c', file],
      env: {},
      files: { [file]: natsServerConfig(i, ports, secrets, runDir) },
      healthUrl: `http://127.0.0.1:${n.monitor}/healthz`,
      listens: `127.0.0.1:${n.client} (routes ${n.cluster}, monitor ${n.monitor})`,
    });
  });
  specs.push({
    name: 'etcd',
    kind: 'etcd',
    command: 'etcd',
    args: etcdArgs(ports, runDir),
    env: {},
    files: {},
    healthUrl: `http://127.0.0.1:${ports.etcd.client}/health`,
    listens: `127.0.0.1:${ports.etcd.client} (peer ${ports.etcd.peer})`,
  });
  ports.postgres.forEach((p, i) => {
    const file = join(runDir, 'pg', `pg-${i + 1}.yml`);
    specs.push({
      name: `pg-${i + 1}`,
      kind: 'patroni',
      command: 'patroni',
      args: [file],
      env: {},
      files: { [file]: patroniConfig(i, ports, secrets, runDir) },
      // Patroni's liveness (200 whether primary or replica, once Postgres runs).
      healthUrl: `http://127.0.0.1:${p.rest}/health`,
      listens: `127.0.0.1:${p.pg} (Patroni REST ${p.rest})`,
      asPostgresUser: true,
    });
  });
  const haproxyFile = join(runDir, 'haproxy.cfg');
  specs.push({
    name: 'haproxy',
    kind: 'haproxy',
    command: '/usr/sbin/haproxy',
    args: ['-db', '-f', haproxyFile],
    env: {},
    files: { [haproxyFile]: haproxyConfig(ports) },
    healthUrl: `http://127.0.0.1:${ports.haproxy.stats}/health`,
    listens: `127.0.0.1:${ports.haproxy.pg} → primary (stats ${ports.haproxy.stats}/stats)`,
  });
  specs.push({
    name: 'sim',
    kind: 'sim',
    command: process.execPath,
    args: [dist('libs/wa-sim/server.js')],
    env: {
      SIM_WS_PORT: String(ports.sim.ws),
      SIM_CONTROL_PORT: String(ports.sim.control),
      SIM_HOST: '127.0.0.1',
      // A stable root key: workers restarted later trust the same simulator.
      SIM_ROOT_KEY_FILE: join(runDir, 'sim-root.key'),
      // `debug`: among others, each message a simulated phone failed to decrypt, with libsignal's reason.
      ...(process.env.CLUSTER_SIM_LOG_LEVEL ? { SIM_LOG_LEVEL: process.env.CLUSTER_SIM_LOG_LEVEL } : {}),
    },
    files: {},
    healthUrl: `http://127.0.0.1:${ports.sim.control}/sim/health`,
    listens: `ws 127.0.0.1:${ports.sim.ws}, control http://127.0.0.1:${ports.sim.control}`,
  });

  const common: Record<string, string> = {
    NATS_URL: natsUrl(ports, secrets),
    DATABASE_URL: databaseUrl(ports, secrets),
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    ...(options.serviceEnv ?? {}),
  };
  const service = (kind: ComponentSpec['kind'], name: string, script: string, port: number, env: Record<string, string>, health: string) =>
    specs.push({
      name,
      kind,
      command: process.execPath,
      args: [dist(script)],
      env: { ...common, ...env },
      files: {},
      healthUrl: `http://127.0.0.1:${port}${health}`,
      listens: kind === 'gateway' ? `http://127.0.0.1:${port}` : `health 127.0.0.1:${port}`,
    });
  // DRAIN_DELAY_MS: after its SIGTERM a gateway serves 1 s more, each answer closing its connection, as behind a
  // load balancer that polls /ready; the clients then hold no idle connection to it when it stops accepting.
  ports.gateways.forEach((port, i) =>
    service(
      'gateway',
      `gateway-${i + 1}`,
      'apps/gateway/main.js',
      port,
      { PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN: secrets.adminToken, DRAIN_DELAY_MS: '1000' },
      '/health',
    ),
  );
  const seam: Record<string, string> = options.sim ? { WA_WEBSOCKET_URL: options.sim.websocketUrl, WA_CERT_ROOT_PUBLIC_KEY: options.sim.rootPublicKey } : {};
  ports.workers.forEach((port, i) =>
    service(
      'worker',
      `worker-${i + 1}`,
      'apps/session-worker/main.js',
      port,
      { HEALTH_PORT: String(port), WORKER_ID: `worker-${i + 1}`, WA_VERSION_URL: `http://127.0.0.1:${ports.sim.control}/sim/wa-version`, ...seam },
      '/ready',
    ),
  );
  ports.dispatchers.forEach((port, i) =>
    service('dispatcher', `dispatcher-${i + 1}`, 'apps/dispatcher/main.js', port, { HEALTH_PORT: String(port), HEALTH_HOST: '127.0.0.1' }, '/ready'),
  );
  ports.relays.forEach((port, i) =>
    service('relay', `relay-${i + 1}`, 'apps/webhook-relay/main.js', port, { HEALTH_PORT: String(port), HEALTH_HOST: '127.0.0.1' }, '/ready'),
  );
  return specs;
}

/** A URL or connection string with its password replaced, for the table and the logs. */
export function maskSecrets(text: string, secrets: ClusterSecrets): string {
  let masked = text;
  for (const value of Object.values(secrets)) {
    if (!value) continue;
    masked = masked.split(value).join('***').split(encodeURIComponent(value)).join('***');
  }
  return masked;
}
