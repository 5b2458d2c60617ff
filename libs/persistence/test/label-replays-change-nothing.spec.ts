import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, LabelRepository, toLabelRecord, type LabelFacts } from '@gw/persistence';

describe('labels from the app state: replays change nothing, deletions hide, new ids follow the highest', () => {
  let db: TestDatabase;
  let sut: LabelRepository;
  const instanceId = 'rlabels';
  const upsert = (label: LabelFacts) => db.dataSource.transaction((manager) => new LabelRepository(db.dataSource).within(manager).upsert(instanceId, label));
  const label = (labelId: string, name: string, extra: Partial<LabelFacts> = {}): LabelFacts => ({
    labelId,
    name,
    color: 3,
    deleted: false,
    predefinedId: '',
    ...extra,
  });

  beforeAll(async () => {
    db = await openTestDatabase();
    sut = new LabelRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-labels', name: 'l' });
  });
  afterAll(() => db.close());

  it('should store a label once and report only real changes', async () => {
    const first = await upsert(label('9', 'Pago'));
    expect(first.changed).toBe(true);
    const replay = await upsert(label('9', 'Pago'));
    expect(replay).toEqual({ row: first.row, changed: false });
    const renamed = await upsert(label('9', 'Pago ✓'));
    expect(renamed.changed).toBe(true);
    expect(renamed.row.id).toBe(first.row.id);
    expect(toLabelRecord(renamed.row, '5511900000040')).toMatchObject({
      id: first.row.id,
      labelid: '9',
      name: 'Pago ✓',
      color: 3,
      colorHex: '#dfaef0',
      owner: '5511900000040',
    });
  });

  it('should hide deleted labels but count them for the next id', async () => {
    await upsert(label('12', 'Antigo', { deleted: true }));
    await upsert(label('custom-a', 'Other device'));
    expect((await sut.list(instanceId)).map((row) => row.labelId)).toEqual(['9', 'custom-a']);
    expect(await sut.find(instanceId, '12')).toBeNull();
    expect(await sut.nextId(instanceId)).toBe('13');
  });
});
