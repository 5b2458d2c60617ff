import { BROWSER_CHOICES, type BrowserChoice, type BrowserProfile } from '@gw/contracts';
import type { WABrowserDescription } from '../baileys';

/**
 * The companion "browser" a device links as: `[os, browserName, osVersion]`. Baileys sends `os` as
 * DeviceProps.os (the name the phone shows under Linked devices) and maps `browserName` to the
 * DeviceProps platform type (SAFARI, FIREFOX, EDGE, CHROME).
 */
const DEFAULTS: Record<BrowserProfile, WABrowserDescription> = {
  safari: ['Mac OS', 'Safari', '14.4.1'],
  firefox: ['Windows', 'Firefox', '10.0.22631'],
  edge: ['Windows', 'Edge', '10.0.22631'],
  chrome: ['Mac OS', 'Chrome', '14.4.1'],
};

/** Profiles `auto` picks from for a new connection (Chrome only when asked for explicitly). */
const AUTO_PICKS: BrowserProfile[] = ['safari', 'firefox', 'edge'];

const MAX_SYSTEM_NAME = 50;

export function isBrowserProfile(value: string): value is BrowserProfile {
  return value !== 'auto' && (BROWSER_CHOICES as readonly string[]).includes(value);
}

/** `auto` keeps a valid saved profile, else picks one of safari/firefox/edge; explicit choices win. */
export function chooseBrowserProfile(choice: BrowserChoice, saved: string, random: () => number = Math.random): BrowserProfile {
  if (choice !== 'auto') return choice;
  if (isBrowserProfile(saved)) return saved;
  return AUTO_PICKS[Math.floor(random() * AUTO_PICKS.length) % AUTO_PICKS.length];
}

/** A blank system name keeps the browser's default OS label (the more stable option). */
export function normaliseSystemName(systemName: string | undefined): string {
  return (systemName ?? '').replace(/\s+/g, ' ').trim().slice(0, MAX_SYSTEM_NAME);
}

export function browserTuple(profile: BrowserProfile, systemName: string): WABrowserDescription {
  const [os, name, version] = DEFAULTS[profile];
  const label = normaliseSystemName(systemName);
  return [label || os, name, version];
}
