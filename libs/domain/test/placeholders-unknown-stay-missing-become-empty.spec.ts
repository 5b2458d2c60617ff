import { resolvePlaceholders } from '../src/placeholders';

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
