import { resolvePlaceholders } from '../src/placeholders';

describe('{{name}} consolidation order', () => {
  const full = { lead_name: 'Lead', lead_fullName: 'Lead Full', wa_contactName: 'Saved', wa_name: 'Profile' };

  it('should prefer lead_name', () => {
    expect(resolvePlaceholders('Hi {{name}}', full)).toBe('Hi Lead');
  });

  it('should fall back to lead_fullName, then wa_contactName, then wa_name', () => {
    expect(resolvePlaceholders('{{name}}', { ...full, lead_name: '' })).toBe('Lead Full');
    expect(resolvePlaceholders('{{name}}', { ...full, lead_name: '', lead_fullName: ' ' })).toBe('Saved');
    expect(resolvePlaceholders('{{name}}', { wa_name: 'Profile' })).toBe('Profile');
  });

  it('should become empty when no name is known', () => {
    expect(resolvePlaceholders('Hi {{name}}!', {})).toBe('Hi !');
  });
});
