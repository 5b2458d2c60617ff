/** An error the API answers with `{error}` and a status chosen here, never by a stack trace. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra top-level fields of the error body (e.g. `instanceId`, `stats`). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  static badRequest(message: string): ApiError {
    return new ApiError(400, message);
  }

  static notFound(message: string): ApiError {
    return new ApiError(404, message);
  }
}
