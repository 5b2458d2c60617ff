import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { REFERENCE_RELATIVE_PATH, loadReference, operationsOf } from '../src/openapi/reference-compare';

const REPO_ROOT = resolve(__dirname, '../../..');

describe('the uazapiGO reference the API coverage compares against', () => {
  it('is a file of the repository, so a fresh clone (CI clones into /tmp) has it', () => {
    expect(REFERENCE_RELATIVE_PATH.startsWith('..')).toBe(false);
    // Tracked by git, not only present in this working tree.
    expect(execFileSync('git', ['ls-files', '--error-unmatch', REFERENCE_RELATIVE_PATH], { cwd: REPO_ROOT, encoding: 'utf8' }).trim()).toBe(
      REFERENCE_RELATIVE_PATH,
    );
    const operations = operationsOf(loadReference(REPO_ROOT));
    expect(operations.length).toBeGreaterThanOrEqual(139);
    expect(operations.find((operation) => operation.key === 'POST /send/text')?.fields).toEqual(expect.arrayContaining(['number', 'text', 'delay']));
  });
});
