import { clusterPlan, clusterPorts, haproxyConfig, maskSecrets, natsServerConfig, natsUrl, patroniConfig, type ClusterSecrets } from './config';

const secrets: ClusterSecrets = {
  natsPassword: 'nats-pw/1',
  natsRoutePassword: 'route-pw',
  postgresPassword: 'pg-pw',
  replicationPassword: 'repl-pw',
  appPassword: 'app-pw',
  adminToken: 'admin-tok',
};
const options = { runDir: '/run/c', repoRoot: '/repo', basePort: 24000, secrets };

describe('cluster config', () => {
  describe('clusterPorts', () => {
    it('should give every process a port of its own', () => {
      const ports = clusterPorts(24000);
      const all = [
        ...ports.nats.flatMap((n) => [n.client, n.cluster, n.monitor]),
        ports.etcd.client,
        ports.etcd.peer,
        ...ports.postgres.flatMap((p) => [p.pg, p.rest]),
        ports.haproxy.pg,
        ports.haproxy.stats,
        ports.sim.ws,
        ports.sim.control,
        ...ports.gateways,
        ...ports.workers,
        ...ports.dispatchers,
        ...ports.relays,
      ];
      expect(new Set(all).size).toBe(all.length);
      expect(all).not.toContain(5432);
      expect(all).not.toContain(4222);
    });

    it('should refuse a base port that leaves no room', () => {
      expect(() => clusterPorts(65400)).toThrow(/base port/);
      expect(() => clusterPorts(80)).toThrow(/base port/);
    });
  });

  describe('natsServerConfig', () => {
    it('should route to the two other servers with the route credentials and require a password of clients', () => {
      const ports = clusterPorts(24000);
      const config = natsServerConfig(0, ports, secrets, '/run/c');
      expect(config).toContain('nats-route://route:route-pw@127.0.0.1:24021');
      expect(config).toContain('nats-route://route:route-pw@127.0.0.1:24022');
      expect(config).not.toContain('127.0.0.1:24020\n');
      expect(config).toMatch(/authorization \{\n {2}user: "gw"\n {2}password: "nats-pw\/1"/);
      expect(config).toContain('store_dir: "/run/c/nats/nats-1"');
      expect(config).toContain('server_name: "nats-1"');
    });
  });

  describe('natsUrl', () => {
    it('should list all three servers, each with the clients credentials (URL-encoded)', () => {
      expect(natsUrl(clusterPorts(24000), secrets)).toBe(
        'nats://gw:nats-pw%2F1@127.0.0.1:24010,nats://gw:nats-pw%2F1@127.0.0.1:24011,nats://gw:nats-pw%2F1@127.0.0.1:24012',
      );
    });
  });

  describe('patroniConfig', () => {
    it('should run synchronous replication with rewind, its own ports and the shared etcd', () => {
      const config = patroniConfig(1, clusterPorts(24000), secrets, '/run/c');
      expect(config).toContain('synchronous_mode: true');
      expect(config).toContain('use_pg_rewind: true');
      expect(config).toContain('name: "pg-2"');
      expect(config).toContain('listen: "127.0.0.1:24051"');
      expect(config).toContain('listen: "127.0.0.1:24061"');
      expect(config).toContain('hosts: "127.0.0.1:24040"');
      expect(config).toContain('data_dir: "/run/c/pg/pg-2/data"');
    });
  });

  describe('haproxyConfig', () => {
    it("should send clients only to the node whose Patroni answers /primary, and cut a demoted node's sessions", () => {
      const config = haproxyConfig(clusterPorts(24000));
      expect(config).toContain('option httpchk GET /primary');
      expect(config).toContain('http-check expect status 200');
      expect(config).toContain('on-marked-down shutdown-sessions');
      expect(config).toContain('server pg-1 127.0.0.1:24050 check port 24060');
      expect(config).toContain('server pg-2 127.0.0.1:24051 check port 24061');
      expect(config).toContain('bind 127.0.0.1:24070');
    });
  });

  describe('clusterPlan', () => {
    it('should start 2 gateways, 3 workers, 2 dispatchers and 2 relays after the engines, each on the NATS cluster and HAProxy', () => {
      const plan = clusterPlan({ ...options, sim: { websocketUrl: 'ws://127.0.0.1:24080/ws', rootPublicKey: 'AAAA' } });
      const count = (kind: string) => plan.filter((spec) => spec.kind === kind).length;
      expect([count('nats'), count('etcd'), count('patroni'), count('haproxy'), count('sim')]).toEqual([3, 1, 2, 1, 1]);
      expect([count('gateway'), count('worker'), count('dispatcher'), count('relay')]).toEqual([2, 3, 2, 2]);
      const kinds = plan.map((spec) => spec.kind);
      expect(kinds.indexOf('gateway')).toBeGreaterThan(kinds.indexOf('haproxy'));
      for (const spec of plan.filter((s) => ['gateway', 'worker', 'dispatcher', 'relay'].includes(s.kind))) {
        expect(spec.env.NATS_URL.split(',')).toHaveLength(3);
        expect(spec.env.DATABASE_URL).toBe('postgres://gateway:app-pw@127.0.0.1:24070/gateway');
        expect(spec.args[0].startsWith('/repo/dist/')).toBe(true);
      }
      const workers = plan.filter((spec) => spec.kind === 'worker');
      expect(workers.map((w) => w.env.WORKER_ID)).toEqual(['worker-1', 'worker-2', 'worker-3']);
      expect(workers[0].env.WA_WEBSOCKET_URL).toBe('ws://127.0.0.1:24080/ws');
      expect(new Set(plan.map((spec) => spec.healthUrl)).size).toBe(plan.length);
      expect(plan.filter((spec) => spec.asPostgresUser).map((spec) => spec.name)).toEqual(['pg-1', 'pg-2']);
    });

    it('should leave the simulator seam off until the simulator runs', () => {
      const worker = clusterPlan(options).find((spec) => spec.kind === 'worker');
      expect(worker?.env.WA_WEBSOCKET_URL).toBeUndefined();
    });
  });

  describe('maskSecrets', () => {
    it('should hide every secret, raw or URL-encoded', () => {
      const text = `${natsUrl(clusterPorts(24000), secrets)} pg-pw admin-tok`;
      const masked = maskSecrets(text, secrets);
      for (const value of Object.values(secrets)) {
        expect(masked).not.toContain(value);
        expect(masked).not.toContain(encodeURIComponent(value));
      }
      expect(masked).toContain('nats://gw:***@127.0.0.1:24010');
    });
  });
});
