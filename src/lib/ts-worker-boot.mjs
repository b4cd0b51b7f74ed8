/**
 * A worker thread's script when the code runs from its TypeScript sources (tests, `tsx`): registers
 * tsx in this thread, then runs the entry whose file URL is the worker's last argument. A worker
 * does not take the parent's loader (`--import tsx` in execArgv is not honoured by a worker on
 * Node 20), hence this file. The bundle in dist/app runs compiled entries and never loads it.
 */
import { register } from 'tsx/esm/api';

register();
await import(process.argv[process.argv.length - 1]);
