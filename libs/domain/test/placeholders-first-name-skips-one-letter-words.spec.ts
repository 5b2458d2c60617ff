import { firstName, resolvePlaceholders } from '../src/placeholders';

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
