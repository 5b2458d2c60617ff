import 'reflect-metadata';
import { buildDocumentWithoutServices } from './document-app';
import { REFERENCE_RELATIVE_PATH, compareWithReference, describeGap, loadReference, operationsOf } from './reference-compare';

/**
 * `npm run api:coverage`: how many of the uazapiGO reference's operations the gateway serves (same
 * method and path in the document it generates), the ones it does not, and the request fields served
 * operations lack. Builds the document from the module graph alone: no Postgres, no NATS.
 */
async function main(repoRoot: string): Promise<void> {
  const reference = loadReference(repoRoot);
  const document = await buildDocumentWithoutServices();
  const { served, missing, gaps } = compareWithReference(document as never, reference);
  const total = served.length + missing.length;
  const extra = operationsOf(document as never).filter((operation) => !operationsOf(reference).some((wanted) => wanted.key === operation.key));
  const lines = [
    `uazapiGO reference (${REFERENCE_RELATIVE_PATH}): ${total} operations`,
    `served: ${served.length} of ${total} (${((100 * served.length) / total).toFixed(1)}%)`,
    '',
    `not served (${missing.length}):`,
    ...missing.map((operation) => `  ${operation.key}`),
    '',
    `request fields of served operations missing or named differently (${gaps.length}):`,
    ...gaps.map((gap) => `  ${describeGap(gap)}`),
    '',
    `served here but not in the reference (${extra.length}):`,
    ...extra.map((operation) => `  ${operation.key}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main(process.argv[2] ?? process.cwd()).catch((error: unknown) => {
  process.stderr.write(`api:coverage failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
