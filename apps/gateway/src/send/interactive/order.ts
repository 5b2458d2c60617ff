import type { MessageRow } from '@gw/persistence';

/** What a payment request takes from a received OrderMessage: id, title, item count, total, currency. */
export interface OrderSummary {
  orderId: string;
  title: string;
  itemCount: number;
  /** In currency units (totalAmount1000 / 1000). */
  total: number;
  currency: string;
}

function field(value: unknown, name: string): unknown {
  if (!value || typeof value !== 'object') return undefined;
  const lower = name.toLowerCase();
  const key = Object.keys(value as Record<string, unknown>).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : (value as Record<string, unknown>)[key];
}

function orderMessageOf(row: MessageRow): unknown {
  if (row.raw) {
    try {
      const stored = JSON.parse(row.raw) as { message?: Record<string, unknown> };
      const order = field(stored.message, 'orderMessage');
      if (order) return order;
    } catch {
      // fall back to the content column
    }
  }
  return row.content;
}

/** Number of an int64 as stored: number, numeric string, or a Long-like `{low, high}`. */
function int64(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '') return Number(value);
  if (value && typeof value === 'object' && 'low' in value && 'high' in value) {
    const { low, high } = value as { low: number; high: number };
    return high * 2 ** 32 + (low >>> 0);
  }
  return 0;
}

export function orderOf(row: MessageRow): OrderSummary {
  const order = orderMessageOf(row);
  const total = int64(field(order, 'totalAmount1000')) / 1000;
  return {
    orderId: String(field(order, 'orderId') ?? ''),
    title: String(field(order, 'orderTitle') ?? ''),
    itemCount: Number(field(order, 'itemCount') ?? 0) || 0,
    total: Number.isFinite(total) ? total : 0,
    currency: String(field(order, 'totalCurrencyCode') ?? ''),
  };
}
