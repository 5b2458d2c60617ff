export { openTestDatabase, testDatabaseUrl, testNatsUrl } from './services';
export type { TestDatabase } from './services';
