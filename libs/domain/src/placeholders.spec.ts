import { firstName, resolvePlaceholders } from './placeholders';

describe('placeholders: unknown and missing', () => {
  it('should leave unknown placeholders as written', () => {
    expect(resolvePlaceholders('{{unknown}} and {{ other }}', {})).toBe('{{unknown}} and {{ other }}');
  });

  it('should turn known but missing values into empty text', () => {
    expect(resolvePlaceholders('[{{lead_email}}][{{lead_field07}}][{{wa_contactName}}]', {})).toBe('[][][]');
  });

  it('should replace every lead field and lead_field01..20', () => {
    const context = {
      lead_personalid: '123',
      lead_status: 'new',
      lead_notes: 'vip',
      lead_assignedAttendant_id: 'att1',
      leadFields: { lead_field01: 'one', lead_field20: 'twenty' },
    };
    expect(
      resolvePlaceholders('{{lead_personalid}} {{lead_status}} {{lead_notes}} {{lead_assignedAttendant_id}} {{lead_field01}} {{lead_field20}}', context),
    ).toBe('123 new vip att1 one twenty');
  });

  it('should not treat lead_field21 as a lead field', () => {
    expect(resolvePlaceholders('{{lead_field21}}', {})).toBe('{{lead_field21}}');
  });
});

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

describe('{{first_name}}', () => {
  it('should take the first word of the consolidated name', () => {
    expect(resolvePlaceholders('Oi {{first_name}}', { wa_name: 'Ana Souza' })).toBe('Oi Ana');
  });

  it('should skip words shorter than 2 characters', () => {
    expect(firstName('J. Silva')).toBe('Silva');
    expect(firstName('A B Carlos')).toBe('Carlos');
  });

  it('should strip punctuation around a word', () => {
    expect(firstName('"Zé" Maria')).toBe('Zé');
    expect(firstName('🙂 Bia')).toBe('Bia');
  });

  it('should be empty when no word qualifies', () => {
    expect(firstName('A B')).toBe('');
  });
});

describe('placeholders: names from /instance/updateFieldsMap', () => {
  it('should resolve a custom display name to its lead field', () => {
    const context = { fieldsMap: { lead_field01: 'CPF', lead_field02: 'Plano' }, leadFields: { lead_field01: '111.222.333-44' } };
    expect(resolvePlaceholders('CPF: {{CPF}}, plano: {{Plano}}', context)).toBe('CPF: 111.222.333-44, plano: ');
  });
});
