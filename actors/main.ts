// Entry point of an actor host process.
import { readConfig } from '../bus/config.ts';
import { createLog } from '../bus/log.ts';
import { logUnhandled, stopOnSignal } from '../bus/process-lifecycle.ts';
import { ActorHost } from './host.ts';

const config = readConfig();
const log = createLog(config);
logUnhandled(log, 'actor host');
const host = await ActorHost.start(config, log);
stopOnSignal(log, 'actor host', () => host.stop());
