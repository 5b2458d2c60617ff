import { ReceivedRequests } from './received-requests';

describe(ReceivedRequests.name, () => {
  it('should know a taken request per instance until its TTL passes', () => {
    let now = 0;
    const sut = new ReceivedRequests(1_000, 10, () => now);
    sut.add('i1', 'send:M1');
    expect(sut.has('i1', 'send:M1')).toBe(true);
    expect(sut.has('i2', 'send:M1')).toBe(false);
    expect(sut.has('i1', 'send:M2')).toBe(false);
    now = 1_000;
    expect(sut.has('i1', 'send:M1')).toBe(false);
  });

  it('should keep at most its bound, dropping the oldest, and drop expired keys as new ones come', () => {
    let now = 0;
    const sut = new ReceivedRequests(1_000, 3, () => now);
    for (let n = 1; n <= 4; n++) sut.add('i1', `send:M${n}`);
    expect(sut.size).toBe(3);
    expect(sut.has('i1', 'send:M1')).toBe(false);
    expect(sut.has('i1', 'send:M4')).toBe(true);
    // Taken again: kept as the newest.
    now = 600;
    sut.add('i1', 'send:M2');
    now = 1_200;
    sut.add('i1', 'send:M5');
    expect(sut.size).toBe(2);
    expect(sut.has('i1', 'send:M2')).toBe(true);
    expect(sut.has('i1', 'send:M3')).toBe(false);
  });
});
