import contract from '../../../contracts/subagent_status_contract.json';
import {
  BATCH_EVENT_TYPES,
  CLARIFICATION_EVENT_TYPES,
  GUARDRAIL_EVENT_TYPES,
  PROVIDER_EVENT_TYPES,
} from '../../../contracts/events';
import {
  BATCH_ITEM_STATES,
  BATCH_LEDGER_STATUSES,
  BATCH_STATUSES,
  LEDGER_STATUSES,
  METADATA_KEYS,
  RUN_STOP_REASONS,
  STATUS_CONTRACT_VERSION,
  SUBAGENT_STATUSES,
  SUBAGENT_STOP_REASONS,
} from '../../../contracts/status';

// The JSON fixture is the cross-process contract (version 2 as in the seeds, plus version 3's batch lists);
// the TypeScript lists must match it value for value and in order, so a change on either side fails here.
describe('status contract', () => {
  it('is version 3 on both sides', () => {
    expect(contract.version).toBe(3);
    expect(STATUS_CONTRACT_VERSION).toBe(contract.version);
  });

  it('lists the same batch statuses, item states, ledger statuses and events', () => {
    expect([...BATCH_STATUSES]).toEqual(contract.batch_status);
    expect([...BATCH_ITEM_STATES]).toEqual(contract.batch_item_state);
    expect([...BATCH_EVENT_TYPES]).toEqual(contract.batch_event_type);
    expect([...CLARIFICATION_EVENT_TYPES]).toEqual(contract.clarification_event_type);
    expect([...GUARDRAIL_EVENT_TYPES]).toEqual(contract.guardrail_event_type);
    expect([...PROVIDER_EVENT_TYPES]).toEqual(contract.provider_event_type);
    // A batch's ledger statuses are ledger statuses.
    expect([...BATCH_LEDGER_STATUSES]).toEqual(contract.batch_ledger_status);
    for (const status of BATCH_LEDGER_STATUSES) expect(LEDGER_STATUSES).toContain(status);
  });

  it('lists the same subagent statuses', () => {
    expect([...SUBAGENT_STATUSES]).toEqual(contract.subagent_status);
  });

  it('lists the same guard stop reasons', () => {
    expect([...SUBAGENT_STOP_REASONS]).toEqual(contract.subagent_stop_reason);
  });

  it('lists the same run stop reasons', () => {
    expect([...RUN_STOP_REASONS]).toEqual(contract.run_stop_reason);
  });

  it('lists the same ledger statuses', () => {
    expect([...LEDGER_STATUSES]).toEqual(contract.ledger_status);
  });

  it('uses the same metadata keys', () => {
    expect(METADATA_KEYS).toEqual(contract.metadata_keys);
  });

  it('has no section the TypeScript side does not pin', () => {
    expect(Object.keys(contract).sort()).toEqual(
      [
        'batch_event_type',
        'batch_item_state',
        'batch_ledger_status',
        'batch_status',
        'clarification_event_type',
        'guardrail_event_type',
        'provider_event_type',
        'ledger_status',
        'metadata_keys',
        'run_stop_reason',
        'subagent_status',
        'subagent_stop_reason',
        'version',
      ].sort(),
    );
  });
});
