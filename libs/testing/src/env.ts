/** Runs `work` with the environment variable `name` set to `value` (unset when undefined), then puts it back as it was. */
export function withEnv<T>(name: string, value: string | undefined, work: () => T): T {
  const before = process.env[name];
  const put = (to: string | undefined) => {
    if (to === undefined) delete process.env[name];
    else process.env[name] = to;
  };
  put(value);
  try {
    return work();
  } finally {
    put(before);
  }
}
