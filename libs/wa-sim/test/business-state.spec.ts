import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { WaSimulator } from '../src';

/** The simulator's business store (profiles, catalogues, new-chat limits) survives a restart with a stateDir. */
describe('BusinessStore with a stateDir', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wa-sim-business-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('should keep a business profile and its catalogue across a restart', async () => {
    const first = new WaSimulator({ stateDir: dir, media: false });
    first.createAccount({ phone: '5511900000801', name: 'Loja', business: true });
    const account = first.registry.get('5511900000801')!;
    const profile = first.business.profileOf(account)!;
    profile.description = 'Eletrônicos';
    const product = first.business.addProduct(account, { name: 'Cabo USB', price: '19900000', isHidden: true });
    await first.stop();

    const second = new WaSimulator({ stateDir: dir, media: false });
    try {
      const again = second.registry.get('5511900000801')!;
      expect(second.business.profileOf(again)).toMatchObject({ description: 'Eletrônicos' });
      expect(second.business.catalogOf(again)).toEqual([expect.objectContaining({ id: product.id, name: 'Cabo USB', isHidden: true })]);
    } finally {
      await second.stop();
    }
  });

  it('should give an account that is no business no profile', () => {
    const sim = new WaSimulator({ media: false });
    sim.createAccount({ phone: '5511900000802', name: 'Pessoa' });
    expect(sim.business.profileOf(sim.registry.get('5511900000802')!)).toBeUndefined();
    return sim.stop();
  });
});
