/**
 * Whether `data` is standard base64 (A–Z, a–z, 0–9, `+`, `/`, at most two `=` at the end). Checked
 * with a search for one bad character rather than an anchored `^[…]+={0,2}$`: V8 runs that pattern
 * with a backtracking stack that grows with the input, and a picture or file of a few megabytes
 * overflowed it (a RangeError, so a 500) once the process's stack was already deep.
 */
export function isBase64(data: string): boolean {
  const body = data.endsWith('==') ? data.slice(0, -2) : data.endsWith('=') ? data.slice(0, -1) : data;
  return body.length > 0 && !/[^A-Za-z0-9+/]/.test(body);
}
