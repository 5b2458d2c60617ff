import { AwaitedAcks } from './awaited-acks';

describe('AwaitedAcks refusal claims', () => {
  it('should take one claim per error ack a send took, and no more', () => {
    const socket = {};
    AwaitedAcks.claimRefusal(socket, 'A', 1_000);
    AwaitedAcks.claimRefusal(socket, 'A', 1_100);
    expect(AwaitedAcks.takeRefusal(socket, 'A', 1_200)).toBe(true);
    expect(AwaitedAcks.takeRefusal(socket, 'A', 1_200)).toBe(true);
    expect(AwaitedAcks.takeRefusal(socket, 'A', 1_200)).toBe(false);
  });

  it('should keep claims apart per socket and per id', () => {
    const [one, two] = [{}, {}];
    AwaitedAcks.claimRefusal(one, 'A', 1_000);
    expect(AwaitedAcks.takeRefusal(two, 'A', 1_000)).toBe(false);
    expect(AwaitedAcks.takeRefusal(one, 'B', 1_000)).toBe(false);
    expect(AwaitedAcks.takeRefusal(one, 'A', 1_000)).toBe(true);
  });

  it('should drop a claim nobody took within a minute (an announcement Baileys merged with another)', () => {
    const socket = {};
    AwaitedAcks.claimRefusal(socket, 'A', 1_000);
    AwaitedAcks.claimRefusal(socket, 'A', 1_000);
    expect(AwaitedAcks.takeRefusal(socket, 'A', 2_000)).toBe(true);
    // The second announcement never came: a later genuine refusal of the id is the inbound side's again.
    expect(AwaitedAcks.takeRefusal(socket, 'A', 62_000)).toBe(false);
    expect(AwaitedAcks.takeRefusal(socket, 'A', 62_001)).toBe(false);
  });

  it("should drop an id's claims once a later status of it came (the refusal's announcement merged into it)", () => {
    const socket = {};
    AwaitedAcks.claimRefusal(socket, 'A', 1_000);
    AwaitedAcks.claimRefusal(socket, 'B', 1_000);
    AwaitedAcks.dropRefusals(socket, 'A');
    expect(AwaitedAcks.takeRefusal(socket, 'A', 1_000)).toBe(false);
    expect(AwaitedAcks.takeRefusal(socket, 'B', 1_000)).toBe(true);
  });

  it('should hold at most a thousand claims per socket, dropping the oldest', () => {
    const socket = {};
    for (let i = 0; i < 1_001; i++) AwaitedAcks.claimRefusal(socket, `id${i}`, 1_000);
    expect(AwaitedAcks.takeRefusal(socket, 'id0', 1_000)).toBe(false);
    expect(AwaitedAcks.takeRefusal(socket, 'id1', 1_000)).toBe(true);
    expect(AwaitedAcks.takeRefusal(socket, 'id1000', 1_000)).toBe(true);
  });
});
