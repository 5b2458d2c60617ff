// libsignal prints whole session records through console.* when it rotates sessions ("Closing
// session", "Closing open session in favor of incoming prekey bundle", decrypt failures we
// provoke on purpose). That is normal protocol behaviour; this filter keeps it off stdout.
const NOISE = [
  /^Closing session/,
  /^Closing open session/,
  /^Session already closed/,
  /^Removing old closed session/,
  /^Migrating session/,
  /^Decrypted message with closed session/,
  /^Failed to decrypt message with any known session/,
  /^Session error:/,
];

let installed = false;

export function quietLibsignalConsole(): void {
  if (installed) return;
  installed = true;
  for (const level of ['info', 'warn', 'error', 'log'] as const) {
    const original = console[level].bind(console);
    console[level] = (...args: unknown[]): void => {
      if (typeof args[0] === 'string' && NOISE.some((re) => re.test(args[0] as string))) return;
      original(...args);
    };
  }
}
