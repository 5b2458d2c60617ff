/** Paging as uazapi clients send it: `limit`/`offset`, or (older clients) `page` (from 1) and `pageSize`. */
export interface PageRequest {
  limit?: number;
  offset?: number;
  page?: number;
  pageSize?: number;
}

/** The reference's `pagination` object; `page`, `pageSize` and `lastPage` only for a request paged that way. */
export interface Pagination {
  totalRecords: number;
  limit: number;
  offset: number;
  page?: number;
  pageSize?: number;
  lastPage?: number;
}

/**
 * The rows a request asks for: `page`/`pageSize` win over `limit`/`offset` when either is given (the
 * default size either way `defaultLimit`), and the `pagination` to answer once the total is known.
 */
export function pageWindow(request: PageRequest, defaultLimit: number): { limit: number; offset: number; pagination: (total: number) => Pagination } {
  const paged = request.page !== undefined || request.pageSize !== undefined;
  const limit = (paged ? request.pageSize : request.limit) ?? defaultLimit;
  const offset = paged ? ((request.page ?? 1) - 1) * limit : (request.offset ?? 0);
  return {
    limit,
    offset,
    pagination: (total) =>
      paged
        ? { totalRecords: total, limit, offset, page: offset / limit + 1, pageSize: limit, lastPage: Math.max(1, Math.ceil(total / limit)) }
        : { totalRecords: total, limit, offset },
  };
}
