import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_TYPES_PATH, apiTypesFile, generateApiTypes } from './api-types';
import { buildDocumentWithoutServices } from './document-app';

describe("the console's API types (apps/manager/src/lib/api-types.gen.ts)", () => {
  it('are what the current OpenAPI document generates: a route or DTO change without `npm run api:types` fails here', async () => {
    const generated = await generateApiTypes(await buildDocumentWithoutServices());
    const committed = readFileSync(apiTypesFile(join(__dirname, '../../../..')), 'utf8');
    if (committed !== generated) throw new Error(`${API_TYPES_PATH} is stale: run \`npm run api:types\` and commit it`);
    expect(committed).toContain('"/instance/all"');
  }, 60_000);
});
