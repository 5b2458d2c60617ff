import { ChatRepository, InstanceRepository, SendQueueRepository } from '@gw/persistence';
import type { DataSource } from 'typeorm';

/** AsyncDispatcher's repositories on a DataSource, as DispatchModule injects them from PersistenceModule. */
export const dispatcherRepositoriesOf = (dataSource: DataSource) =>
  [new SendQueueRepository(dataSource), new InstanceRepository(dataSource), new ChatRepository(dataSource)] as const;
