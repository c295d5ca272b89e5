// Entry point of an actor host process.
import { log } from '../bus/log.ts';
import { logUnhandled, stopOnSignal } from '../bus/process-lifecycle.ts';
import { ActorHost } from './host.ts';

logUnhandled(log, 'actor host');
const host = await ActorHost.start();
stopOnSignal(log, 'actor host', () => host.stop());
