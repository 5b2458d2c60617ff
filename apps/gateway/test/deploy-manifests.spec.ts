import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

interface Rendered {
  file: string;
  object: any;
}
const root = path.join(__dirname, '../../..');
const load = createRequire(__filename);
const { deploymentObjects, validateObject } = load(path.join(root, 'tools/deploy/validate-manifests.js')) as {
  deploymentObjects(): Rendered[];
  validateObject(object: unknown): { problems: string[]; skipped?: boolean };
};

/**
 * The Kubernetes deployment (k8s/, issue #39), checked without a cluster: every object as `kubectl apply -k`
 * renders it, against the Kubernetes API's schemas (kubernetes-models), and the manifests against the code
 * (tools/deploy/check-manifests.js).
 */
describe('the Kubernetes manifests', () => {
  const objects = deploymentObjects();
  const named = (kind: string, name: string) => objects.find(({ object }) => object.kind === kind && object.metadata.name === name)?.object;

  it('should all be valid against the Kubernetes API schemas', () => {
    const invalid = objects
      .map(({ file, object }) => ({ at: `${file} ${object.kind}/${object.metadata?.name}`, ...validateObject(object) }))
      .filter((result) => result.problems.length > 0);
    expect(invalid).toEqual([]);
    expect(objects.filter(({ object }) => validateObject(object).skipped).map(({ object }) => object.kind)).toEqual(['ServiceMonitor']);
  });

  it('should hold what an operator needs: the four services and NATS, their budgets, autoscalers, network policies and the migrations Job', () => {
    const services = ['gateway', 'session-worker', 'dispatcher', 'webhook-relay'];
    for (const name of services) expect(named('Deployment', name)).toBeDefined();
    for (const name of [...services, 'nats']) expect(named('PodDisruptionBudget', name)).toBeDefined();
    expect(named('HorizontalPodAutoscaler', 'gateway').spec.metrics[0].resource.name).toBe('cpu');
    expect(named('HorizontalPodAutoscaler', 'session-worker').spec.metrics[0].pods.metric.name).toBe('wa_gateway_worker_instances');
    expect(named('StatefulSet', 'nats').spec.replicas).toBe(3);
    expect(named('NetworkPolicy', 'default-deny-ingress').spec.podSelector).toEqual({});
    expect(named('Job', 'migrate').spec.template.spec.containers[0].args).toEqual(['dist/apps/gateway/main.js', 'migrate']);
    // Every image of ours as the kustomization names it.
    const images = objects.flatMap(({ object }) => (object.spec?.template?.spec?.containers ?? []).map((container: { image: string }) => container.image));
    expect(new Set(images.filter((image) => image.startsWith('wa-gateway')))).toEqual(new Set(['wa-gateway:0.1.0']));
  });

  it('should refuse a broken object, naming the field', () => {
    const deployment = structuredClone(named('Deployment', 'gateway'));
    deployment.spec.template.spec.containers[0].ports[0].containerPort = '8080x';
    expect(validateObject(deployment).problems.join('\n')).toMatch(/containerPort must be integer/);

    const noSelector = structuredClone(named('Deployment', 'dispatcher'));
    delete noSelector.spec.selector;
    expect(validateObject(noSelector).problems.join('\n')).toMatch(/selector/);

    const autoscaler = structuredClone(named('HorizontalPodAutoscaler', 'gateway'));
    autoscaler.spec.metrics[0].resource.target.averageUtilization = '70%';
    expect(validateObject(autoscaler).problems.join('\n')).toMatch(/averageUtilization must be integer/);

    const budget = structuredClone(named('PodDisruptionBudget', 'gateway'));
    budget.apiVersion = 'policy/v1beta7';
    expect(validateObject(budget).problems).toEqual(['policy/v1beta7 PodDisruptionBudget is not a Kubernetes API kind']);
  });

  it('should agree with the code (check-manifests: variables, bundles, ports, references, budgets, autoscalers)', () => {
    const run = spawnSync(process.execPath, [path.join(root, 'tools/deploy/check-manifests.js')], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect({ status: run.status, problems: run.stderr }).toEqual({ status: 0, problems: '' });
  });

  it('should refuse a docker-compose.yml that leaves the topology (a NATS server out of the routes, one session worker)', () => {
    const broken = fs
      .readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')
      .replace(/,nats:\/\/route:\$\{NATS_ROUTE_PASSWORD:-route\}@nats-3:6222/g, '')
      .replace('replicas: 3', 'replicas: 1');
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'compose-'));
    const file = path.join(directory, 'docker-compose.yml');
    fs.writeFileSync(file, broken);
    const run = spawnSync(process.execPath, [path.join(root, 'tools/deploy/check-manifests.js')], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, COMPOSE_FILE_CHECKED: file },
    });
    fs.rmSync(directory, { recursive: true, force: true });
    expect(run.status).toBe(1);
    for (const node of ['nats-1', 'nats-2', 'nats-3']) expect(run.stderr).toContain(`${node}'s routes should name nats-3`);
    expect(run.stderr).toContain('session-worker needs at least 3 replicas');
  });
});
