import { isBase64 } from './base64';

describe(isBase64.name, () => {
  it('should take standard base64 with or without padding', () => {
    expect(isBase64(Buffer.from('hello').toString('base64'))).toBe(true);
    expect(isBase64('aGk')).toBe(true);
    expect(isBase64('aGk=')).toBe(true);
    expect(isBase64('aQ==')).toBe(true);
  });

  it('should refuse other characters, misplaced or extra padding, and nothing at all', () => {
    for (const bad of ['', '=', '==', 'a===', 'a=b', 'not base64 !!', 'ab-_', 'ab\ncd']) expect(isBase64(bad)).toBe(false);
  });

  it('should check tens of megabytes linearly, also from deep in the stack', () => {
    const huge = Buffer.alloc(48 * 1024 * 1024, 7).toString('base64');
    const deep = (depth: number): boolean => (depth === 0 ? isBase64(huge) : deep(depth - 1));
    expect(deep(5_000)).toBe(true);
    expect(isBase64(`${huge}!`)).toBe(false);
  });
});
