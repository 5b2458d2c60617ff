import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { API_TYPES_PATH, apiTypesFile, generateApiTypes } from './api-types';
import { buildDocumentWithoutServices } from './document-app';

/**
 * `npm run api:types`: writes the console's API types generated from the gateway's OpenAPI document (the one
 * /openapi.json serves, built from the module graph alone: no Postgres, no NATS). With `--check` it writes
 * nothing and fails when the committed file is not what the document generates.
 */
async function main(workspaceRoot: string, check: boolean): Promise<void> {
  const types = await generateApiTypes(await buildDocumentWithoutServices());
  const file = apiTypesFile(workspaceRoot);
  if (!check) {
    writeFileSync(file, types);
    process.stdout.write(`wrote ${API_TYPES_PATH}\n`);
    return;
  }
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    // missing: it differs
  }
  if (committed !== types) throw new Error(`${API_TYPES_PATH} is not what the OpenAPI document generates: run \`npm run api:types\` and commit it`);
  process.stdout.write(`${API_TYPES_PATH} is up to date\n`);
}

main(process.argv[2] ?? process.cwd(), process.argv.includes('--check')).catch((error: unknown) => {
  process.stderr.write(`api:types failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
