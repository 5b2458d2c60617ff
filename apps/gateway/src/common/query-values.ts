import { Transform } from 'class-transformer';

/** A query value as a number when it reads as an integer; anything else stays as sent, for the rule to refuse. */
export const integer = () => Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : value));

/**
 * An ISO 8601 date-time or Unix milliseconds (a string, or a number in a body) as a Date; anything else
 * stays as sent, for the rule to refuse.
 */
export const instant = () =>
  Transform(({ value }: { value: unknown }) => {
    if (typeof value === 'number') return Number.isFinite(value) ? new Date(value) : value;
    if (typeof value !== 'string' || value === '') return value;
    const date = /^\d{1,16}$/.test(value) ? new Date(Number(value)) : /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value) : undefined;
    return date && !Number.isNaN(date.getTime()) ? date : value;
  });
