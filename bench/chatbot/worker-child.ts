import { countStatements, loadMark, serveWorkerChild, windowProfiler } from '../support/processes';
import { benchLogger, WINDOW_PROF } from './options';

/**
 * The child process's side of `--topology split`: the session worker as apps/session-worker runs it; it
 * counts its statements and marks its load when the bench asks.
 */
export async function workerChild(): Promise<void> {
  const profile = windowProfiler();
  let counter: { stop(): Map<string, number> } | undefined;
  serveWorkerChild({
    natsName: 'bench-chatbot-worker',
    poolSize: 20,
    logger: benchLogger(),
    worker: { workerId: 'chatbot-bench' },
    measure: async () => {
      if (WINDOW_PROF) await profile.start();
      counter = await countStatements();
      return loadMark();
    },
    measured: async () => {
      if (WINDOW_PROF) await profile.stop(`${WINDOW_PROF}/worker.window.cpuprofile`);
      return { ...loadMark(), statements: [...(counter?.stop() ?? new Map<string, number>()).entries()] };
    },
  });
}
