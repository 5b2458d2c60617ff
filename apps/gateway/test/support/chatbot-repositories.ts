import type { ChatbotRepositories } from '@gw/chatbot';
import {
  ChatbotAdmissionRepository,
  ChatbotRepository,
  ChatbotTranscriptRepository,
  FileRepository,
  OutboxCursorRepository,
  QuickReplyRepository,
  type Database,
} from '@gw/persistence';

/** The chatbot's repositories over a test's database, as PersistenceModule provides them to ChatbotModule. */
export function chatbotRepositories(dataSource: Database): ChatbotRepositories {
  return {
    rounds: new ChatbotRepository(dataSource),
    admissions: new ChatbotAdmissionRepository(dataSource),
    quickReplies: new QuickReplyRepository(dataSource),
    files: new FileRepository(dataSource),
    transcripts: new ChatbotTranscriptRepository(dataSource),
    cursors: new OutboxCursorRepository(dataSource),
  };
}
