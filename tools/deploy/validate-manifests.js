#!/usr/bin/env node
// Renders the Kubernetes manifests as `kubectl apply -k` would (each kustomization's resources, in
// order, with its `images` rewritten) and validates every object against the Kubernetes API's schemas
// (kubernetes-models: the OpenAPI schemas of the API, compiled, installed from npm; no cluster needed):
// types, required fields, enums and formats. Objects of operators' CRDs (the Prometheus Operator's
// ServiceMonitor) are outside those schemas and are listed as such. tools/deploy/check-manifests.js
// checks what the schemas cannot: that the manifests agree with the code.
//   node tools/deploy/validate-manifests.js            (exit 1 on any invalid object)
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const root = path.join(__dirname, '../..');
/** Groups whose kinds belong to an operator's CRDs, validated where the operator runs. */
const CRD_GROUPS = new Set(['monitoring.coreos.com']);

function parseAll(file) {
  const documents = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'), { merge: true });
  const values = [];
  for (const document of documents) {
    if (document.errors.length) throw new Error(`${path.relative(root, file)}: YAML: ${document.errors[0].message}`);
    const value = document.toJSON();
    if (value != null) values.push(value);
  }
  return values;
}

/** `name[:tag]` → { name, tag } (a registry port is not a tag). */
function splitImage(image) {
  const at = image.lastIndexOf(':');
  return at > image.lastIndexOf('/') ? { name: image.slice(0, at), tag: image.slice(at + 1) } : { name: image, tag: undefined };
}

/** The objects a kustomization directory applies: its resources (files or directories), images rewritten. */
function renderKustomization(directory) {
  const kustomization = parseAll(path.join(directory, 'kustomization.yaml'))[0] ?? {};
  const objects = [];
  for (const resource of kustomization.resources ?? []) {
    const target = path.join(directory, resource);
    if (!fs.existsSync(target)) throw new Error(`${path.relative(root, directory)}/kustomization.yaml: no resource ${resource}`);
    if (fs.statSync(target).isDirectory()) objects.push(...renderKustomization(target));
    else for (const object of parseAll(target)) objects.push({ file: path.relative(root, target), object });
  }
  const images = kustomization.images ?? [];
  for (const { object } of objects) {
    const pod = object.kind === 'CronJob' ? object.spec?.jobTemplate?.spec?.template : object.spec?.template;
    for (const container of [...(pod?.spec?.containers ?? []), ...(pod?.spec?.initContainers ?? [])]) {
      const { name, tag } = splitImage(container.image ?? '');
      const rule = images.find((image) => image.name === name);
      if (rule) container.image = `${rule.newName ?? name}:${rule.newTag ?? tag ?? 'latest'}`;
    }
  }
  return objects;
}

/** The model class of an object's apiVersion and kind, or undefined when kubernetes-models has none. */
function modelOf(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const modulePath = group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`;
  try {
    return require(modulePath)[kind];
  } catch {
    return undefined;
  }
}

/** The problems of one object ([] when valid); `skipped` for an operator's CRD. */
function validateObject(object) {
  if (!object || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') return { problems: ['no apiVersion or kind'] };
  const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0] : '';
  if (CRD_GROUPS.has(group)) return { problems: [], skipped: true };
  const Model = modelOf(object.apiVersion, object.kind);
  if (!Model) return { problems: [`${object.apiVersion} ${object.kind} is not a Kubernetes API kind`] };
  if (!object.metadata?.name) return { problems: ['no metadata.name'] };
  try {
    new Model(JSON.parse(JSON.stringify(object))).validate();
    return { problems: [] };
  } catch (error) {
    return {
      problems: String(error.message ?? error)
        .split(/,\s*(?=data[/.])/)
        .map((line) => line.trim()),
    };
  }
}

/** Every object of the repository's Kubernetes deployment: the base, the migrations Job, and files applied apart. */
function deploymentObjects() {
  const directory = path.join(root, 'k8s');
  const objects = [...renderKustomization(directory), ...renderKustomization(path.join(directory, 'migrate'))];
  const rendered = new Set(objects.map(({ file }) => file));
  // Files applied apart (servicemonitor.yaml: the operator's CRD) are validated too.
  for (const entry of fs.readdirSync(directory)) {
    const file = `k8s/${entry}`;
    if (entry.endsWith('.yaml') && entry !== 'kustomization.yaml' && !rendered.has(file)) {
      for (const object of parseAll(path.join(root, file))) objects.push({ file, object });
    }
  }
  return objects;
}

module.exports = { renderKustomization, validateObject, deploymentObjects };

if (require.main === module) {
  const objects = deploymentObjects();
  let invalid = 0;
  let skipped = 0;
  for (const { file, object } of objects) {
    const result = validateObject(object);
    if (result.skipped) skipped++;
    for (const problem of result.problems) process.stderr.write(`✗ ${file} ${object?.kind}/${object?.metadata?.name}: ${problem}\n`);
    if (result.problems.length) invalid++;
  }
  if (invalid) process.exit(1);
  process.stdout.write(`${objects.length - skipped} Kubernetes objects valid against the API's schemas (${skipped} of an operator's CRDs not checked).\n`);
}
