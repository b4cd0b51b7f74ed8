/**
 * Setup file (vitest.config.ts): after each test file, the data directories its stacks were given
 * by the helper are removed (test/support/made-data-dirs.ts). This file's `afterAll` is registered
 * before the test file's own, so it runs after them, once every stack of the file is stopped.
 */
import { afterAll } from 'vitest';
import { removeMadeDataDirs } from './made-data-dirs.ts';

afterAll(() => removeMadeDataDirs());
