import { ReceivedRequests } from './received-requests';

describe(ReceivedRequests.name, () => {
  it('should know a taken request per instance until its TTL passes', () => {
    let now = 0;
    const sut = new ReceivedRequests(1_000, 10, () => now);
    sut.add('i1', 'send:M1');
    expect(sut.state('i1', 'send:M1')).toBe('running');
    expect(sut.state('i2', 'send:M1')).toBe('none');
    expect(sut.state('i1', 'send:M2')).toBe('none');
    now = 1_000;
    expect(sut.state('i1', 'send:M1')).toBe('none');
  });

  it('should tell a request answered from one still running', () => {
    const sut = new ReceivedRequests();
    sut.add('i1', 'send:M1');
    sut.answer('i1', 'send:M1');
    sut.answer('i1', 'send:M9');
    expect(sut.state('i1', 'send:M1')).toBe('answered');
    expect(sut.state('i1', 'send:M9')).toBe('none');
    // Taken again (a retry): running again until that try is answered too, whichever answer comes first.
    sut.add('i1', 'send:M1');
    sut.add('i1', 'send:M1');
    expect(sut.state('i1', 'send:M1')).toBe('running');
    sut.answer('i1', 'send:M1');
    expect(sut.state('i1', 'send:M1')).toBe('running');
    sut.answer('i1', 'send:M1');
    expect(sut.state('i1', 'send:M1')).toBe('answered');
  });

  it('should keep at most its bound, dropping the oldest, and drop expired keys as new ones come', () => {
    let now = 0;
    const sut = new ReceivedRequests(1_000, 3, () => now);
    for (let n = 1; n <= 4; n++) sut.add('i1', `send:M${n}`);
    expect(sut.size).toBe(3);
    expect(sut.state('i1', 'send:M1')).toBe('none');
    expect(sut.state('i1', 'send:M4')).not.toBe('none');
    // Taken again: kept as the newest.
    now = 600;
    sut.add('i1', 'send:M2');
    now = 1_200;
    sut.add('i1', 'send:M5');
    expect(sut.size).toBe(2);
    expect(sut.state('i1', 'send:M2')).not.toBe('none');
    expect(sut.state('i1', 'send:M3')).toBe('none');
  });
});
