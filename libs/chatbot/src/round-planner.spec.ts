import { splitMessage } from './round-planner';

describe('answers', () => {
  it('splits long answers at sentence or word ends, never above the limit', () => {
    const text = 'Primeira frase curta. Segunda frase um pouco maior que a primeira. Terceira.';
    const parts = splitMessage(text, 30);
    expect(parts.every((part) => part.length <= 30)).toBe(true);
    expect(parts.join(' ')).toBe(text);
    expect(splitMessage('x'.repeat(25), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
    expect(splitMessage('  ', 10)).toEqual([]);
    expect(splitMessage('no limit here', 0)).toEqual(['no limit here']);
  });
});
