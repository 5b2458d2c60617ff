import { holdsGroupFlags } from './chat-row';

describe('holdsGroupFlags', () => {
  it("should answer as applyState's `group_flags @>` test: every flag given held with the same value", () => {
    const chat = { groupFlags: { admin: false, member: true, announce: false, community: false } };
    expect(holdsGroupFlags(chat, { admin: false, member: true, announce: false, community: false })).toBe(true);
    expect(holdsGroupFlags(chat, { announce: false })).toBe(true);
    expect(holdsGroupFlags(chat, { admin: true, member: true, announce: false, community: false })).toBe(false);
    // A flag the row does not hold yet is a change.
    expect(holdsGroupFlags({ groupFlags: {} }, { admin: false })).toBe(false);
    expect(holdsGroupFlags({ groupFlags: null as unknown as Record<string, boolean> }, { admin: false })).toBe(false);
  });
});
