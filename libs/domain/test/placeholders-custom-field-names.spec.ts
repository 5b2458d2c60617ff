import { resolvePlaceholders } from '../src/placeholders';

describe('placeholders: names from /instance/updateFieldsMap', () => {
  it('should resolve a custom display name to its lead field', () => {
    const context = { fieldsMap: { lead_field01: 'CPF', lead_field02: 'Plano' }, leadFields: { lead_field01: '111.222.333-44' } };
    expect(resolvePlaceholders('CPF: {{CPF}}, plano: {{Plano}}', context)).toBe('CPF: 111.222.333-44, plano: ');
  });
});
