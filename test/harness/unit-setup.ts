/**
 * Unit tests that call the model activity store transcript segments: they go to a folder of the test run's,
 * never to the user's payload cache.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PAYLOAD_DIR_ENV } from '../../payloads/store';

process.env[PAYLOAD_DIR_ENV] ??= join(tmpdir(), 'durable-subagents-unit-payloads');
