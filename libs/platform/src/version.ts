import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Set by the webpack build (tools/webpack/app.config.js): package.json's version, and GIT_COMMIT or the tree's HEAD. */
declare const __PACKAGE_VERSION__: string | undefined;
declare const __GIT_COMMIT__: string | undefined;

export interface BuildInfo {
  /** package.json's version. */
  version: string;
  /** The git commit built, or 'unknown' (a build without git, or code run from source). */
  commit: string;
  /** The Node.js running it. */
  node: string;
}

/** Run from source (tests): the package.json of the directory it runs in. */
function sourceVersion(): string {
  try {
    const parsed = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { version?: unknown };
    return typeof parsed.version === 'string' ? parsed.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

let info: BuildInfo | undefined;

/** What `GET /version` answers and every `/health` carries. */
export function buildInfo(): BuildInfo {
  info ??= {
    version: typeof __PACKAGE_VERSION__ === 'string' ? __PACKAGE_VERSION__ : sourceVersion(),
    commit: typeof __GIT_COMMIT__ === 'string' && __GIT_COMMIT__ ? __GIT_COMMIT__ : 'unknown',
    node: process.version,
  };
  return info;
}
