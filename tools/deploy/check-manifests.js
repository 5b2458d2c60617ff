#!/usr/bin/env node
// Checks docker-compose.yml and k8s/*.yaml without Docker or a cluster: every file parses, and what
// they say agrees with the code: each variable they set is one some app reads (EnvReader calls in
// apps/*/src and libs/*/src), each command names a bundle the build emits, each probe and health check
// targets the port the container listens on, and every ConfigMap/Secret reference resolves.
//   node tools/deploy/check-manifests.js
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const root = path.join(__dirname, '../..');
const problems = [];
const problem = (where, message) => problems.push(`${where}: ${message}`);

function parseAll(file) {
  const text = fs.readFileSync(path.resolve(root, file), 'utf8');
  const documents = YAML.parseAllDocuments(text, { merge: true });
  const values = [];
  for (const document of documents) {
    for (const error of document.errors) problem(file, `YAML: ${error.message}`);
    const value = document.toJSON();
    if (value != null) values.push(value);
  }
  return values;
}

// Variables read through EnvReader (`env.string('NAME'…)`, `env.port('NAME'…)`…, or a helper given the reader:
// `cidrList(env, 'NAME')`) by shipped code.
function variablesReadByCode() {
  const names = new Set();
  const walk = (directory) => {
    for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        for (const match of fs.readFileSync(full, 'utf8').matchAll(/\benv(?:\.\w+\(|,)\s*'([A-Z][A-Z0-9_]*)'/g)) names.add(match[1]);
      }
    }
  };
  for (const group of ['apps', 'libs']) {
    for (const project of fs.readdirSync(path.join(root, group))) {
      const source = path.join(root, group, project, 'src');
      if (fs.existsSync(source)) walk(source);
    }
  }
  return names;
}

// Bundles the build emits (webpack entries): dist/apps/<app>/main.js and the simulator's server.
function knownBundles() {
  const bundles = new Set(fs.readdirSync(path.join(root, 'apps')).map((app) => `dist/apps/${app}/main.js`));
  bundles.add('dist/libs/wa-sim/server.js');
  return bundles;
}

const known = variablesReadByCode();
// Read by the platform itself rather than through EnvReader.
for (const name of ['NODE_ENV', 'NODE_OPTIONS']) known.add(name);
const bundles = knownBundles();

function checkVariable(where, name) {
  if (!known.has(name)) problem(where, `sets ${name}, which no app reads`);
}

function checkBundle(where, args) {
  const bundle = (args ?? []).find((arg) => arg.endsWith('.js'));
  if (!bundle || !bundles.has(bundle)) problem(where, `command ${JSON.stringify(args)} names no bundle the build emits`);
  else if (!fs.existsSync(path.join(root, bundle.replace(/^dist\/(apps|libs)\/([^/]+)\/.*$/, '$1/$2')))) problem(where, `${bundle}: no such project`);
  return bundle;
}

/** The port a service listens on: gateway PORT (default 8080), others HEALTH_PORT. */
function listeningPort(bundle, environment) {
  const isGateway = bundle === 'dist/apps/gateway/main.js';
  const value = environment[isGateway ? 'PORT' : 'HEALTH_PORT'];
  if (value !== undefined) return Number(value);
  return {
    'dist/apps/gateway/main.js': 8080,
    'dist/apps/session-worker/main.js': 8082,
    'dist/apps/dispatcher/main.js': 8083,
    'dist/apps/webhook-relay/main.js': 8084,
  }[bundle];
}

function checkCompose() {
  // COMPOSE_FILE_CHECKED: another compose file, relative to the repository or absolute (the spec checks a broken copy).
  const file = process.env.COMPOSE_FILE_CHECKED ?? 'docker-compose.yml';
  const [compose] = parseAll(file);
  if (!compose) return problem(file, 'empty');
  const services = compose.services ?? {};
  // The topology of k8s/ and `npm run cluster` (issue #39): three NATS servers in one cluster, two gateways
  // behind a balancer, three session workers, two dispatchers, two relays.
  const natsNodes = ['nats-1', 'nats-2', 'nats-3'];
  const replicas = { gateway: 2, 'session-worker': 3, dispatcher: 2, 'webhook-relay': 2 };
  for (const required of ['postgres', ...natsNodes, 'balancer', ...Object.keys(replicas)]) {
    if (!services[required]) problem(file, `no service ${required}`);
  }
  for (const [name, least] of Object.entries(replicas)) {
    if ((services[name]?.deploy?.replicas ?? 1) < least) problem(file, `${name} needs at least ${least} replicas`);
  }
  for (const node of natsNodes) {
    const command = [services[node]?.command ?? []].flat().join(' ');
    if (!command.includes('-js')) problem(file, `${node} must run with JetStream (-js)`);
    if (!command.includes('--user') || !command.includes('--pass')) problem(file, `${node} must require a user and password of clients`);
    const routes = /--routes (\S+)/.exec(command)?.[1] ?? '';
    for (const peer of natsNodes) if (!routes.includes(`@${peer}:6222`)) problem(file, `${node}'s routes should name ${peer} (with the routes' credentials)`);
    if (!/--cluster nats:\/\/[^:@\s]+:[^@\s]+@/.test(command)) problem(file, `${node}'s cluster listener should require the routes' credentials`);
  }
  if (!(services.balancer?.ports ?? []).some((port) => String(port).endsWith(':8080'))) problem(file, 'the balancer should publish the API port 8080');
  if ((services.gateway?.ports ?? []).length) problem(file, 'the gateways are reached through the balancer: they publish no port');
  const postgresMajor = Number(/postgres:(\d+)/.exec(services.postgres?.image ?? '')?.[1]);
  if (!(postgresMajor >= 16)) problem(file, 'postgres must be 16 or newer');
  for (const [name, service] of Object.entries(services)) {
    const where = `${file} services.${name}`;
    if (!service.healthcheck) problem(where, 'no healthcheck');
    if (name === 'postgres' || name === 'balancer' || natsNodes.includes(name)) continue;
    const bundle = checkBundle(where, service.command);
    const environment = service.environment ?? {};
    for (const variable of Object.keys(environment)) checkVariable(where, variable);
    for (const required of ['DATABASE_URL', 'NATS_URL']) if (!environment[required]) problem(where, `${required} not set`);
    for (const node of natsNodes) if (!String(environment.NATS_URL ?? '').includes(`@${node}:4222`)) problem(where, `NATS_URL should name ${node}`);
    const port = listeningPort(bundle, environment);
    const test = (service.healthcheck?.test ?? []).join(' ');
    if (port && !test.includes(` ${port} `)) problem(where, `healthcheck does not target port ${port}: ${test}`);
    for (const dependency of ['postgres', ...natsNodes]) {
      if (service.depends_on?.[dependency]?.condition !== 'service_healthy') problem(where, `should wait for ${dependency} to be healthy`);
    }
  }
}

function checkKubernetes() {
  const directory = 'k8s';
  const objects = [];
  for (const entry of fs.readdirSync(path.join(root, directory)).filter((name) => name.endsWith('.yaml'))) {
    for (const object of parseAll(`${directory}/${entry}`)) objects.push({ file: `${directory}/${entry}`, object });
  }
  const byKind = (kind) => objects.filter(({ object }) => object.kind === kind);
  const namespace = byKind('Namespace')[0]?.object.metadata.name;
  if (!namespace) problem(directory, 'no Namespace');
  const configMaps = new Map(byKind('ConfigMap').map(({ object }) => [object.metadata.name, object.data ?? {}]));
  const secrets = new Map(byKind('Secret').map(({ object }) => [object.metadata.name, { ...object.stringData, ...object.data }]));
  // NATS's own ConfigMap and Secret (nats.yaml) configure the NATS server, not our apps.
  const ofNats = (kind) =>
    new Set(
      byKind(kind)
        .filter(({ object }) => object.metadata.labels?.['app.kubernetes.io/name'] === 'nats')
        .map(({ object }) => object.metadata.name),
    );
  const natsConfigMaps = ofNats('ConfigMap');
  const natsSecrets = ofNats('Secret');
  for (const [name, data] of configMaps) if (!natsConfigMaps.has(name)) for (const variable of Object.keys(data)) checkVariable(`ConfigMap ${name}`, variable);
  for (const [name, data] of secrets) {
    if (!natsSecrets.has(name)) for (const variable of Object.keys(data)) checkVariable(`Secret ${name}`, variable);
    for (const [key, value] of Object.entries(data)) {
      if (!/CHANGE_ME/.test(String(value))) problem(`Secret ${name}`, `${key} must be a placeholder (CHANGE_ME), never a real secret`);
    }
  }
  for (const { file, object } of objects) {
    if (object.kind !== 'Namespace' && object.kind !== 'Kustomization' && object.metadata?.namespace !== namespace) {
      problem(`${file} ${object.kind}/${object.metadata?.name}`, `not in namespace ${namespace}`);
    }
  }

  const deployments = byKind('Deployment');
  for (const required of ['gateway', 'session-worker', 'dispatcher', 'webhook-relay']) {
    if (!deployments.some(({ object }) => object.metadata.name === required)) problem(directory, `no Deployment ${required}`);
  }
  const services = byKind('Service');
  for (const { file, object } of deployments) {
    const where = `${file} Deployment/${object.metadata.name}`;
    const pod = object.spec.template;
    const selector = object.spec.selector?.matchLabels ?? {};
    for (const [key, value] of Object.entries(selector)) {
      if (pod.metadata?.labels?.[key] !== value) problem(where, `selector ${key}=${value} does not match the pod labels`);
    }
    if (!pod.spec.terminationGracePeriodSeconds) problem(where, 'no terminationGracePeriodSeconds (the drain after SIGTERM)');
    const hasBudget = byKind('PodDisruptionBudget').some(({ object: budget }) =>
      Object.entries(budget.spec.selector?.matchLabels ?? {}).every(([key, value]) => pod.metadata.labels?.[key] === value),
    );
    if (!hasBudget) problem(where, 'no PodDisruptionBudget selects these pods');
    if (['gateway', 'session-worker'].includes(object.metadata.name)) {
      if (
        !byKind('HorizontalPodAutoscaler').some(
          ({ object: hpa }) => hpa.spec.scaleTargetRef?.kind === 'Deployment' && hpa.spec.scaleTargetRef.name === object.metadata.name,
        )
      )
        problem(where, 'no HorizontalPodAutoscaler scales it');
      if (object.spec.replicas !== undefined) problem(where, 'sets replicas, which its HorizontalPodAutoscaler owns (each apply would reset it)');
      if (!pod.spec.containers.every((container) => container.lifecycle?.preStop))
        problem(where, 'no preStop (its drain waits for the endpoints to stop routing to it)');
    }
    for (const container of pod.spec.containers) {
      const at = `${where} container ${container.name}`;
      const bundle = checkBundle(at, container.args ?? container.command);
      const environment = {};
      for (const variable of container.env ?? []) {
        checkVariable(at, variable.name);
        if (variable.value !== undefined) environment[variable.name] = variable.value;
        const secretRef = variable.valueFrom?.secretKeyRef;
        if (secretRef && !(secrets.get(secretRef.name) ?? {})[secretRef.key]) problem(at, `secret ${secretRef.name}/${secretRef.key} does not exist`);
        const configRef = variable.valueFrom?.configMapKeyRef;
        if (configRef && !(configMaps.get(configRef.name) ?? {})[configRef.key]) problem(at, `configmap ${configRef.name}/${configRef.key} does not exist`);
      }
      const fromConfig = {};
      for (const source of container.envFrom ?? []) {
        if (source.configMapRef) {
          if (!configMaps.has(source.configMapRef.name)) problem(at, `configmap ${source.configMapRef.name} does not exist`);
          Object.assign(fromConfig, configMaps.get(source.configMapRef.name));
        }
        if (source.secretRef && !secrets.has(source.secretRef.name)) problem(at, `secret ${source.secretRef.name} does not exist`);
      }
      const provided = new Set([...Object.keys(environment), ...Object.keys(fromConfig), ...(container.env ?? []).map((variable) => variable.name)]);
      for (const required of ['DATABASE_URL', 'NATS_URL']) if (!provided.has(required)) problem(at, `${required} not provided`);

      const port = listeningPort(bundle, { ...fromConfig, ...environment });
      const ports = new Map((container.ports ?? []).map((entry) => [entry.name, entry.containerPort]));
      const resolve = (probePort) => (typeof probePort === 'string' ? ports.get(probePort) : probePort);
      for (const probe of ['livenessProbe', 'readinessProbe']) {
        const check = container[probe]?.httpGet;
        if (!check) {
          problem(at, `no ${probe}`);
          continue;
        }
        if (resolve(check.port) !== port) problem(at, `${probe} on port ${check.port}, but the app listens on ${port}`);
        const expected = probe === 'livenessProbe' ? '/health' : '/ready';
        if (check.path !== expected) problem(at, `${probe} should GET ${expected}, not ${check.path}`);
      }
      for (const kind of ['requests', 'limits']) {
        if (!container.resources?.[kind]?.cpu || !container.resources?.[kind]?.memory) problem(at, `no cpu/memory ${kind}`);
      }
      const exposed = services.filter(({ object: service }) =>
        Object.entries(service.spec.selector ?? {}).every(([key, value]) => pod.metadata.labels?.[key] === value),
      );
      if (exposed.length === 0) problem(where, 'no Service selects these pods');
      for (const { object: service } of exposed) {
        for (const servicePort of service.spec.ports) {
          if (resolve(servicePort.targetPort) !== port)
            problem(`Service/${service.metadata.name}`, `targetPort ${servicePort.targetPort} is not the app's port ${port}`);
        }
      }
    }
  }
  // The session workers' autoscaler reads a metric a worker exports.
  const metricNames = new Set(
    [...fs.readFileSync(path.join(root, 'libs/platform/src/metrics.ts'), 'utf8').matchAll(/name: '(wa_gateway_[a-z_]+)'/g)].map((match) => match[1]),
  );
  for (const { file, object } of byKind('HorizontalPodAutoscaler')) {
    for (const metric of object.spec.metrics ?? []) {
      const name = metric.pods?.metric?.name;
      if (name && !metricNames.has(name)) problem(`${file} HorizontalPodAutoscaler/${object.metadata.name}`, `scales on ${name}, which no service exports`);
    }
  }
  // A ServiceMonitor scrapes ports (by name) of the Services it selects.
  for (const { file, object } of byKind('ServiceMonitor')) {
    const selected = services.filter(({ object: service }) =>
      Object.entries(object.spec.selector?.matchLabels ?? {}).every(([key, value]) => service.metadata.labels?.[key] === value),
    );
    for (const endpoint of object.spec.endpoints ?? []) {
      if (!selected.some(({ object: service }) => service.spec.ports.some((entry) => entry.name === endpoint.port)))
        problem(`${file} ServiceMonitor/${object.metadata.name}`, `no selected Service has a port named ${endpoint.port}`);
      if (endpoint.path !== '/metrics') problem(`${file} ServiceMonitor/${object.metadata.name}`, `scrapes ${endpoint.path}, not /metrics`);
    }
  }
  const kustomization = parseAll(`${directory}/kustomization.yaml`)[0];
  const listed = new Set(kustomization?.resources ?? []);
  // Objects of an operator's CRDs (the Prometheus Operator's ServiceMonitor) are applied apart, where it runs.
  const needsOperator = (file) => objects.filter((entry) => entry.file === file).every(({ object }) => /^monitoring\.coreos\.com\//.test(object.apiVersion));
  for (const { file } of objects) {
    const name = path.basename(file);
    if (name !== 'kustomization.yaml' && !listed.has(name) && !needsOperator(file)) problem(`${directory}/kustomization.yaml`, `does not list ${name}`);
  }
  return objects.length;
}

checkCompose();
const count = checkKubernetes();
if (problems.length) {
  process.stderr.write(`${problems.map((line) => `✗ ${line}`).join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`docker-compose.yml and ${count} Kubernetes objects agree with the code (${known.size} variables read by the apps).\n`);
