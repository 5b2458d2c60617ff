// One flat config for the whole workspace. Syntax-only typescript-eslint rules (no type information)
// keep `nx run-many -t lint` fast; `tsc --noEmit` in each project's build target does the type checking.
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

// Who may import whom, by project tag: [source tag, tags it may import]. A project whose tags match
// no constraint may import nothing of ours; apps are never importable (the rule itself forbids it).
const layers = [
  // The contract between services: plain types and constants.
  ['type:contracts', []],
  ['type:platform', ['type:contracts', 'type:platform']],
  // Pure domain rules (JID/phone normalisation, placeholders, menu choices): no I/O.
  ['type:domain', ['type:contracts', 'type:domain']],
  ['type:data', ['type:contracts', 'type:platform', 'type:domain']],
  ['type:feature', ['type:contracts', 'type:platform', 'type:domain', 'type:data', 'type:feature']],
  // The simulator speaks the WhatsApp protocol; it must not lean on the gateway's own code.
  ['type:sim', ['type:contracts']],
  ['type:testing', ['type:contracts', 'type:platform', 'type:domain', 'type:data']],
  ['type:app', ['type:contracts', 'type:platform', 'type:domain', 'type:data', 'type:feature', 'type:sim']],
  // The operator console runs in the browser: it speaks the API's contract (plain types and constants), nothing else of ours.
  ['type:console', ['type:contracts']],
];

// Production images carry no devDependencies: shipped code must not load test packages.
const testPackages = ['testcontainers', '@nestjs/testing', 'jest', '@jest/*'];
// Contracts stay free of frameworks and I/O so every side can use them.
const contractsBanned = ['@nestjs/*', 'typeorm', 'pg', '@nats-io/*', '@whiskeysockets/baileys', 'pino'];

function constraints({ inTests }) {
  return layers.map(([sourceTag, allowed]) => {
    const banned = [...(sourceTag === 'type:contracts' ? contractsBanned : []), ...(inTests || sourceTag === 'type:testing' ? [] : testPackages)];
    // Specs may also use libs/testing and drive Baileys against the simulator (contracts' specs need neither).
    const testOnly = inTests && sourceTag !== 'type:contracts' ? ['type:testing', 'type:sim'].filter((tag) => !allowed.includes(tag)) : [];
    const onlyDependOnLibsWithTags = [...allowed, ...testOnly];
    return { sourceTag, onlyDependOnLibsWithTags, ...(banned.length ? { bannedExternalImports: banned } : {}) };
  });
}

const boundaries = (options) => ({
  '@nx/enforce-module-boundaries': [
    'error',
    {
      depConstraints: constraints(options),
      // libs/testing builds on the libraries below it, whose specs use libs/testing: cycles made of test
      // files only. Cycles between production sources are still reported.
      ignoredCircularDependencies: ['type:data', 'type:platform', 'type:contracts'].map((tag) => ['tag:type:testing', `tag:${tag}`]),
      // A lib's own specs may test it through its public entry point (`@gw/<lib>`).
      allowCircularSelfDependency: options.inTests,
      // The gateway loads these only when it runs them in its own process (embedded services, the sandbox's simulator):
      // a deployed gateway starts without them (ADR 0056). Its tests drive them directly, which costs the bundle
      // nothing; a static import of them in the gateway's own sources is still refused.
      ...(options.inTests ? { checkDynamicDependenciesExceptions: ['@gw/sessions', '@gw/wa-sim'] } : {}),
    },
  ],
});

export default tseslint.config(
  { ignores: ['**/node_modules/**', 'dist/**', 'coverage/**', 'tmp/**', '.nx/**', '.data/**'] },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      ...boundaries({ inTests: false }),
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['**/*.spec.ts', '**/test/**/*.ts'],
    rules: {
      ...boundaries({ inTests: true }),
      // Response bodies and protocol fixtures in tests are loosely typed on purpose.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // The gateway's layers (issue #37): common/ and runtime/ sit below the API areas (apps/gateway/src/<area>/),
    // which import them, never the reverse. What an area must lend them goes down into common/ or runtime/, or
    // is inverted (an interface and an injection token in common/ that the core module binds, e.g.
    // ADMIN_TOKEN_CHECK). app.module, gateway-core.module, http-app and main compose the areas from above.
    files: ['apps/gateway/src/common/**/*.ts', 'apps/gateway/src/runtime/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '!../common', '!../common/*', '!../runtime', '!../runtime/*', '../../*'],
              message: 'common/ and runtime/ must not import an area of the gateway (or its root): move the piece down or invert it.',
            },
          ],
        },
      ],
    },
  },
  {
    // Build and test configuration files are CommonJS scripts run by Node.
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        exports: 'writable',
        __dirname: 'readonly',
        __filename: 'readonly',
        process: 'readonly',
        console: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The console's Vite config: an ES module run by Node.
    files: ['apps/manager/vite.config.mjs'],
    languageOptions: { globals: { process: 'readonly', URL: 'readonly' } },
  },
  prettier,
);
