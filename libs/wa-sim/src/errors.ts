/** An error with the HTTP status the control API should answer with. */
export class SimError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'SimError';
  }
}
