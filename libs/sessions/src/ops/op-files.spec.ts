import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Each op is handled in the file named for its family (the part of its name before the first dot):
 * `chat.presence` in chat.ops.ts, `quickreply.save` in quick-reply.ops.ts. Ops are never renamed to
 * fit (their names are bus subjects that gateways and workers of another version use during a rolling
 * deploy), so the few whose names carry no family, or a misleading one, are listed here with their file.
 * Each *.ops.ts types its request parsers and its handlers with one op union, so the parsers' keys are
 * the file's ops.
 */
const NAMED_OTHERWISE: Readonly<Record<string, string>> = {
  // No family in the name: the session's lifecycle and presence (the gateway's `instance/` area), read receipts.
  connect: 'instance',
  logout: 'instance',
  release: 'instance',
  hibernate: 'instance',
  status: 'instance',
  presence: 'instance',
  read: 'message',
  // A misleading family: the status audience's privacy, and the label list's refresh.
  'status.privacy': 'privacy',
  'labels.refresh': 'label',
};

const OPS_DIR = __dirname;
const familyOfFile = (file: string) => file.replace(/\.ops\.ts$/, '').replaceAll('-', '');
const familyOfOp = (op: string) => op.split('.')[0];

function opsByFile(): Array<{ file: string; ops: string[] }> {
  return readdirSync(OPS_DIR)
    .filter((file) => file.endsWith('.ops.ts'))
    .map((file) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const exported = require(join(OPS_DIR, file)) as Record<string, unknown>;
      const parsers = Object.entries(exported).filter(([name, value]) => name.endsWith('Requests') && typeof value === 'object' && value !== null);
      return { file, ops: parsers.flatMap(([, value]) => Object.keys(value as object)) };
    });
}

describe('op files', () => {
  it('should handle each op in the file named for its family', () => {
    const misplaced = opsByFile().flatMap(({ file, ops }) =>
      ops.filter((op) => (NAMED_OTHERWISE[op] ?? familyOfOp(op)) !== familyOfFile(file)).map((op) => `${op} in ${file}`),
    );

    expect(misplaced).toEqual([]);
  });

  it('should handle each op in one file only', () => {
    const ops = opsByFile().flatMap(({ ops }) => ops);

    expect(ops.filter((op, index) => ops.indexOf(op) !== index)).toEqual([]);
  });

  it('should list only ops that exist among those named otherwise', () => {
    const ops = new Set(opsByFile().flatMap(({ ops }) => ops));

    expect(Object.keys(NAMED_OTHERWISE).filter((op) => !ops.has(op))).toEqual([]);
  });
});
