import { browserTuple, chooseBrowserProfile, normaliseSystemName } from './browser-profile';

describe('browser profile', () => {
  describe(chooseBrowserProfile.name, () => {
    it('should honour an explicit choice, chrome included', () => {
      expect(chooseBrowserProfile('chrome', 'safari')).toBe('chrome');
      expect(chooseBrowserProfile('edge', '')).toBe('edge');
    });

    it('should keep a valid saved profile on auto', () => {
      expect(chooseBrowserProfile('auto', 'firefox')).toBe('firefox');
    });

    it('should pick safari, firefox or edge on auto when nothing valid is saved', () => {
      expect(chooseBrowserProfile('auto', '', () => 0)).toBe('safari');
      expect(chooseBrowserProfile('auto', 'netscape', () => 0.5)).toBe('firefox');
      expect(chooseBrowserProfile('auto', '', () => 0.99)).toBe('edge');
    });
  });

  describe(browserTuple.name, () => {
    it('should put the system name in the OS slot', () => {
      expect(browserTuple('safari', '  My   Shop ')).toEqual(['My Shop', 'Safari', '14.4.1']);
    });

    it('should fall back to the browser default OS when the system name is blank', () => {
      expect(browserTuple('edge', '   ')).toEqual(['Windows', 'Edge', '10.0.22631']);
      expect(browserTuple('chrome', '')).toEqual(['Mac OS', 'Chrome', '14.4.1']);
    });
  });

  it('should cap long system names', () => {
    expect(normaliseSystemName('x'.repeat(80))).toHaveLength(50);
  });
});
