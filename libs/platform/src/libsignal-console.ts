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

/** One dropped line without its record: the event ("Closing session:", "Session error:Error: Bad MAC") and when. */
export function signalEventSummary(args: unknown[]): { time: string; libsignal: string; detail?: string } {
  const detail = typeof args[1] === 'string' ? args[1].split('\n')[0].slice(0, 120) : undefined;
  return { time: new Date().toISOString(), libsignal: String(args[0]).slice(0, 120), ...(detail ? { detail } : {}) };
}

/** Installs the filter once per process (idempotent). */
export function dropSignalSessionDumps(): void {
  if (installed) return;
  installed = true;
  for (const level of LEVELS) {
    const original = console[level].bind(console);
    console[level] = (...args: unknown[]): void => {
      if (!isSignalSessionDump(args)) original(...args);
      // SIGNAL_EVENTS_LOG=1: each dropped line's first words and, for a decrypt error, its reason, never the
      // session record itself (how bench/cluster told session rotations from decrypt failures, ADR 0042).
      else if (process.env.SIGNAL_EVENTS_LOG === '1') original(JSON.stringify(signalEventSummary(args)));
    };
  }
}
