import { testDatabaseUrl } from '@gw/testing';
import { Client } from 'pg';

/**
 * patches/pg+8.23.1.patch: every result of one shape (its column names, in order) starts its rows from one
 * shared empty row instead of building one per query (issue #38: ~8.5 KB and ~12 µs for a one-row query of
 * 40 columns). The rows must stay what pg answered before: objects of their own, each column an own
 * property (a column named `__proto__` too, never the prototype), values parsed by the result's own types.
 */
describe('pg result rows built from a shared shape', () => {
  let client: Client;

  beforeAll(async () => {
    client = new Client({ connectionString: await testDatabaseUrl() });
    await client.connect();
  });

  afterAll(async () => {
    await client.end();
  });

  it('gives each row of a shape an object of its own', async () => {
    const first = await client.query(`SELECT 1::int AS a, 'x'::text AS b`);
    const second = await client.query(`SELECT g AS a, g::text AS b FROM generate_series(2, 3) g`);
    first.rows[0].a = 100;
    first.rows[0].added = true;
    expect(second.rows).toEqual([
      { a: 2, b: '2' },
      { a: 3, b: '3' },
    ]);
    second.rows[0].b = 'changed';
    expect(second.rows[1]).toEqual({ a: 3, b: '3' });
    const third = await client.query(`SELECT 4::int AS a, 'y'::text AS b`);
    expect(third.rows).toEqual([{ a: 4, b: 'y' }]);
    expect(Object.keys(third.rows[0])).toEqual(['a', 'b']);
  });

  it('builds the empty row of a shape once (the patch is applied)', async () => {
    const prebuilt = (result: unknown) => (result as { _prebuiltEmptyResultObject: object })._prebuiltEmptyResultObject;
    const first = await client.query(`SELECT 1::int AS shared_a, 'x'::text AS shared_b`);
    const second = await client.query(`SELECT 2::int AS shared_a, 'y'::text AS shared_b`);
    const other = await client.query(`SELECT 2::int AS shared_b, 'y'::text AS shared_a`);
    expect(prebuilt(second)).toBe(prebuilt(first));
    expect(prebuilt(other)).not.toBe(prebuilt(first));
    expect(prebuilt(first)).toEqual({ shared_a: null, shared_b: null });
  });

  it('tells apart shapes of one width, and parses each column by its own type', async () => {
    const numbers = await client.query(`SELECT 1::int AS a, 2::int AS b`);
    const renamed = await client.query(`SELECT 1::int AS b, 2::int AS a`);
    const texts = await client.query(`SELECT 'one'::text AS a, true AS b`);
    expect(numbers.rows[0]).toEqual({ a: 1, b: 2 });
    expect(Object.keys(renamed.rows[0])).toEqual(['b', 'a']);
    expect(renamed.rows[0]).toEqual({ b: 1, a: 2 });
    expect(texts.rows[0]).toEqual({ a: 'one', b: true });
  });

  it('keeps a column named __proto__ an own property, the prototype untouched', async () => {
    for (let round = 0; round < 2; round++) {
      const { rows } = await client.query(`SELECT 'value' AS "__proto__", 1::int AS a`);
      expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
      expect(Object.prototype.hasOwnProperty.call(rows[0], '__proto__')).toBe(true);
      expect(Object.getOwnPropertyDescriptor(rows[0], '__proto__')?.value).toBe('value');
      expect(rows[0].a).toBe(1);
    }
  });

  it('answers a repeated column name once, with its last value, as before', async () => {
    const { rows } = await client.query(`SELECT 1::int AS a, 2::int AS a`);
    expect(rows).toEqual([{ a: 2 }]);
  });

  it('answers rows as arrays when asked, and rows of no columns', async () => {
    const arrays = await client.query({ text: `SELECT 1::int AS a, 'x'::text AS b`, rowMode: 'array' });
    expect(arrays.rows).toEqual([[1, 'x']]);
    const none = await client.query(`SELECT FROM generate_series(1, 2)`);
    expect(none.rows).toEqual([{}, {}]);
  });
});
