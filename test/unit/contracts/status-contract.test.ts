import contract from '../../../contracts/subagent_status_contract.json';
import {
  LEDGER_STATUSES,
  METADATA_KEYS,
  RUN_STOP_REASONS,
  STATUS_CONTRACT_VERSION,
  SUBAGENT_STATUSES,
  SUBAGENT_STOP_REASONS,
} from '../../../contracts/status';

// The JSON fixture is the cross-process contract (version 2, as in the seeds); the TypeScript lists must
// match it value for value and in order, so a change on either side fails here.
describe('status contract', () => {
  it('is version 2 on both sides', () => {
    expect(contract.version).toBe(2);
    expect(STATUS_CONTRACT_VERSION).toBe(contract.version);
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
