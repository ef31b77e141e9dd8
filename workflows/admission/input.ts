/** What `admissionWorkflow` is started with, and what one execution hands the next. */
import type {
  AdmissionCounters,
  AdmissionDelivery,
  AdmissionPool,
  AdmissionSettings,
  LeaseHold,
  QueuedRequest,
  SlotHolder,
  WorkerDeclaration,
} from '../../contracts/admission';

export interface AdmissionWorkflowInput {
  settings: AdmissionSettings;
  /** What it bounds (absent: `subagents`): only its refusal texts differ. */
  pool?: AdmissionPool;
  /** Continue as new past this many events (default ADMISSION_HISTORY_EVENTS; lower in tests). */
  history_events?: number;
  /** Set when the workflow continues as new. */
  carry?: AdmissionCarry;
}

export interface AdmissionCarry {
  running: SlotHolder[];
  queued: QueuedRequest[];
  /** Fairness keys with queued requests, the next one to be served first. */
  rotation: string[];
  counters: AdmissionCounters;
  workers: WorkerDeclaration[];
  last_grant_ms?: number;
  /** Spare slots leased to workers. */
  leases?: LeaseHold[];
  /** Answers decided but not yet sent by the previous execution, sent by this one first. */
  answers?: AdmissionDelivery[];
}
