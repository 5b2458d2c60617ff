import { isMaskOf, maskSecret } from './records';

describe('secrets', () => {
  it('masks secrets and recognises its own mask', () => {
    expect(maskSecret('sk-abcdefghijkl')).toBe('sk-************');
    expect(isMaskOf(maskSecret('sk-abcdefghijkl'), 'sk-abcdefghijkl')).toBe(true);
    expect(isMaskOf('sk-new-key', 'sk-abcdefghijkl')).toBe(false);
    expect(isMaskOf('', '')).toBe(false);
  });
});
