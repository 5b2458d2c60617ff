import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The installed Baileys' source file, as npm ci left it (patch-package applies patches/). */
function baileysSource(path: string): string {
  const main = createRequire(__filename).resolve('@whiskeysockets/baileys');
  return readFileSync(join(dirname(main), path), 'utf8');
}

describe('patches/@whiskeysockets+baileys', () => {
  it("should not let a new socket's first send replace working Signal sessions (ADR 0042)", () => {
    // rc14 forced a new session (a fresh pre-key bundle) with every contact a new socket's device query
    // returned: after a hand-over the heir replaced the sessions its peers were using, and bench/cluster's
    // rolling restart lost 11–45 sends to 174–735 decrypt failures at the phones. Sessions are asserted, not forced.
    const source = baileysSource('Socket/messages-send.js');
    expect(source).toContain('await assertSessions(lids, false);');
    expect(source).not.toContain('await assertSessions(lids, true);');
  });
});
