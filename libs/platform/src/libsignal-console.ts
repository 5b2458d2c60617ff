/**
 * libsignal (under Baileys) writes whole Signal session records through `console.*` when it rotates
 * sessions ("Closing session: SessionEntry {… privKey …}", "Closing open session in favor of incoming
 * prekey bundle") and when a decrypt fails: private keys on stdout, in production too, outside our
 * JSON log stream. Those lines are dropped; everything else printed through the console passes.
 */
const SIGNAL_DUMPS = [
  /^Closing session/,
  /^Closing open session/,
  /^Session already closed/,
  /^Removing old closed session/,
  /^Migrating session/,
  /^Decrypted message with closed session/,
  /^Failed to decrypt message with any known session/,
  /^Session error:/,
  /^V1 session storage migration error/,
];

const LEVELS = ['info', 'warn', 'error', 'log', 'debug'] as const;
let installed = false;

export function isSignalSessionDump(args: unknown[]): boolean {
  return typeof args[0] === 'string' && SIGNAL_DUMPS.some((pattern) => pattern.test(args[0] as string));
}

/** Installs the filter once per process (idempotent). */
export function dropSignalSessionDumps(): void {
  if (installed) return;
  installed = true;
  for (const level of LEVELS) {
    const original = console[level].bind(console);
    console[level] = (...args: unknown[]): void => {
      if (!isSignalSessionDump(args)) original(...args);
    };
  }
}
