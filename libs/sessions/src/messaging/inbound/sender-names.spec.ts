import type { Tx } from '@gw/persistence';
import { SenderNames } from './sender-names';

describe(SenderNames.name, () => {
  const group = {} as Tx;
  const later = {} as Tx;
  const ids = ['5511999990000@s.whatsapp.net', '1234@lid'];

  it("covers the same name in the write's own transaction, by either identity, once", () => {
    const names = new SenderNames();
    names.wrote(group, ids, 'Ana');
    expect(names.covers(group, ['', '1234@lid'], 'Ana')).toBe(true);
    expect(names.covers(group, ids, 'Ana')).toBe(false);
  });

  it('covers nothing in another transaction until the write committed, and nothing of another name', () => {
    const names = new SenderNames();
    names.wrote(group, ids, 'Ana');
    // Looked at before the commit with no transaction of its own: kept for the look inside one.
    expect(names.covers(null, ids, 'Ana')).toBe(false);
    expect(names.covers(later, ids, 'Ana')).toBe(false);
    names.committed(names.wrote(group, ids, 'Ana'));
    expect(names.covers(null, ids, 'Ana')).toBe(true);
    names.committed(names.wrote(later, ids, 'Ana'));
    expect(names.covers(later, ids, 'Ana S.')).toBe(false);
    expect(names.covers(later, ids, 'Ana')).toBe(false);
  });

  it('covers no update that knows an identity the write did not (the LID and phone number get paired)', () => {
    const names = new SenderNames();
    names.wrote(group, ['1234@lid'], 'Ana');
    expect(names.covers(group, ids, 'Ana')).toBe(false);
    names.wrote(group, [ids[0]], 'Ana');
    expect(names.covers(group, ids, 'Ana')).toBe(false);
    names.wrote(group, [ids[0]], 'Ana');
    expect(names.covers(group, [ids[0], ''], 'Ana')).toBe(true);
  });

  it('forgets a sender whose contact another write changed', () => {
    const names = new SenderNames();
    names.committed(names.wrote(group, ids, 'Ana'));
    names.forget(['5511999990000@s.whatsapp.net', '1234@lid']);
    expect(names.covers(null, ids, 'Ana')).toBe(false);
  });
});
