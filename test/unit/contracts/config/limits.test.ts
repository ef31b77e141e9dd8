/** The limits a config puts on a run: the lead's default wall clock, one model answer's size. */
import { defaultConfig, parseConfig } from '../../../../contracts/config';
import { buildLeadRunInput } from '../../../../contracts/config/lead-input';
import { leadRunInputProblems } from '../../../../contracts/inputs';
import { DEFAULT_LEAD_TIMEOUT_SECONDS } from '../../../../contracts/lead';
import { configProblems } from '../../../support/config-problems';

const request = { prompt: 'p', workspace: '/srv/work/1' };

describe('lead.timeout_seconds', () => {
  it('gives the lead a wall clock of 6 hours by default, carried in its input', () => {
    const input = buildLeadRunInput(defaultConfig(), request);
    expect(DEFAULT_LEAD_TIMEOUT_SECONDS).toBe(21_600);
    expect(input.timeout_seconds).toBe(21_600);
    expect(leadRunInputProblems(input)).toEqual([]);
  });

  it('takes another value, and 0 for none', () => {
    expect(buildLeadRunInput(parseConfig({ lead: { timeout_seconds: 90 } }).config, request)).toMatchObject({
      timeout_seconds: 90,
    });
    const off = buildLeadRunInput(parseConfig({ lead: { timeout_seconds: 0 } }).config, request);
    expect(off).not.toHaveProperty('timeout_seconds');
  });

  it('refuses a negative or non-numeric value', () => {
    expect(configProblems({ lead: { timeout_seconds: -1 } })).toEqual([
      'lead.timeout_seconds: -1 is out of range (0 for none, or more)',
    ]);
    expect(configProblems({ lead: { timeout_seconds: 'long' } })).toHaveLength(1);
  });
});

describe('models[].max_answer_bytes', () => {
  it('is carried into the model settings, and refuses what is not a whole number from 1', () => {
    const { config } = parseConfig({
      models: [{ name: 'm', provider: 'scripted', max_answer_bytes: 65_536 }],
    });
    expect(buildLeadRunInput(config, request).model).toMatchObject({ name: 'm', max_answer_bytes: 65_536 });
    expect(
      configProblems({ models: [{ name: 'm', provider: 'scripted', max_answer_bytes: 0 }] }),
    ).toHaveLength(1);
  });
});
