import { historyRequest, normaliseDelays } from './instance.rules';

describe('historyRequest', () => {
  it('should ask 90 days of normal history when absent', () => {
    expect(historyRequest(undefined)).toEqual({ days: 90, fullSync: false });
  });

  it.each([1, 45, 90])('should ask %i days of normal history', (days) => {
    expect(historyRequest(days)).toEqual({ days, fullSync: false });
  });

  it.each([91, 200, 365])('should ask %i days of full history', (days) => {
    expect(historyRequest(days)).toEqual({ days, fullSync: true });
  });

  it('should ask the maximum, 365 days of full history, for 0', () => {
    expect(historyRequest(0)).toEqual({ days: 365, fullSync: true });
  });

  it.each([-1, 366, 1000, 1.5, '30', null])('should ignore %p and apply 90', (value) => {
    expect(historyRequest(value)).toEqual({ days: 90, fullSync: false });
  });
});

describe('normaliseDelays', () => {
  it('should turn negatives into 0', () => {
    expect(normaliseDelays(-5, -1)).toEqual({ min: 0, max: 0 });
  });

  it('should raise a max below min to min', () => {
    expect(normaliseDelays(10, 3)).toEqual({ min: 10, max: 10 });
  });

  it('should keep a valid range', () => {
    expect(normaliseDelays(2, 4)).toEqual({ min: 2, max: 4 });
  });

  it('should treat a negative max with a positive min as min', () => {
    expect(normaliseDelays(3, -2)).toEqual({ min: 3, max: 3 });
  });
});
