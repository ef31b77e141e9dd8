/**
 * Admission: the deployment-wide bounds on subagents executing at once (`subagent_runtime`) and on lead runs in
 * flight (`lead_runtime`), each kept by one `admissionWorkflow` per task queue (a pool). A subagent or a lead
 * asks its pool for a slot as its first step (a signal, sent by a local activity inside the workflow's first
 * task), waits for the answer as workflow state (no worker slot, no thread), and gives the slot back when it
 * ends.
 * Declared once here for the admission workflow, the subagents and the clients that read its state (no Node
 * APIs: the workflow bundle imports this file).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

export const ADMISSION_POLICIES = ['queue', 'reject'] as const;
export type AdmissionPolicy = (typeof ADMISSION_POLICIES)[number];

/** The four DeerFlow keys (frozen when a worker starts) and the optional start rate. */
export interface AdmissionSettings {
  /** Subagents executing at once across every run of the task queue (nested ones included). */
  max_running: number;
  /** Delegations that may wait for a slot; one more is refused. */
  max_queued: number;
  /** `reject`: a delegation beyond `max_running` is refused at once instead of waiting. */
  admission_policy: AdmissionPolicy;
  /** A queued delegation is refused after waiting this long. */
  queue_timeout_seconds: number;
  /** Slots granted per second at most (absent: as fast as they come free). */
  max_starts_per_second?: number;
}

export const DEFAULT_ADMISSION_SETTINGS: AdmissionSettings = {
  max_running: 3,
  max_queued: 64,
  admission_policy: 'queue',
  queue_timeout_seconds: 300,
};

/**
 * `lead_runtime`: lead runs in flight on a task queue. Past the bound a run waits in the queue, visible in
 * `status` and the live tree, rather than slowing every run in flight (on a two-core machine one worker serves
 * about 3–4 runs a second of three delegations each: 100 in flight is about half a minute of work).
 */
export const DEFAULT_RUN_ADMISSION_SETTINGS: AdmissionSettings = {
  max_running: 100,
  max_queued: 10_000,
  admission_policy: 'queue',
  queue_timeout_seconds: 3600,
};

/** What a pool bounds: subagents executing (`subagent_runtime`) or lead runs in flight (`lead_runtime`). */
export type AdmissionPool = 'subagents' | 'runs';

/** The one admission workflow of a task queue and pool: every run on that queue shares it. */
export function admissionWorkflowId(taskQueue: string, pool: AdmissionPool = 'subagents'): string {
  return pool === 'runs' ? `subagents-run-admission/${taskQueue}` : `subagents-admission/${taskQueue}`;
}

/** A pool's settings key in the config file. */
export function admissionSection(pool: AdmissionPool): string {
  return pool === 'runs' ? 'lead_runtime' : 'subagent_runtime';
}

export const ADMISSION_WORKFLOW_TYPE = 'admissionWorkflow';

/**
 * The admission workflow's task timeout: the SDK's own 10 s. Its tasks take milliseconds on an idle machine, but
 * on a saturated one a task waits behind others in the worker, and a task that times out is retried from
 * scratch (no cache, every signal that came meanwhile added): with 2 s, a loaded worker never finished one and
 * every delegation of the queue stalled. A task lost with a killed worker is rare (most of the time none is in
 * flight) and costs this once.
 */
export const ADMISSION_WORKFLOW_TASK_TIMEOUT = '10 seconds';

/** Answers one delivery (a local activity) signals at most: the work a task does is bounded. */
export const ADMISSION_ANSWERS_PER_DELIVERY = 256;

/** A subagent's notice to its parent about its slot (only when it had to wait: an uncontended one says nothing). */
export type SubagentAdmissionUpdate =
  | { task_id: string; state: 'queued'; running: number; queued: number }
  | { task_id: string; state: 'admitted' };

export const subagentAdmissionSignal = defineSignal<[SubagentAdmissionUpdate]>('subagent_admission_update');

/** The queue timeout a run assumes when its config does not say (DeerFlow's default). */
export const DEFAULT_QUEUE_TIMEOUT_SECONDS = 300;

/** The exact text of a refusal when the slots and the queue are taken (or the policy is `reject`). */
export function capacityFullText(running: number, queued: number, pool: AdmissionPool = 'subagents'): string {
  const what = pool === 'runs' ? 'Lead run capacity' : 'Subagent execution capacity';
  return `${what} is full (${running} running, ${queued} queued)`;
}

/** The exact text of a refusal after the queue timeout. */
export function queueTimeoutText(seconds: number, pool: AdmissionPool = 'subagents'): string {
  const what = pool === 'runs' ? 'a lead run slot' : 'a subagent execution slot';
  return `Timed out after ${seconds} s waiting for ${what}`;
}

/** Who asks: a subagent, for itself (its slot goes back when it closes, at the latest). */
export interface SlotRequest {
  /** The slot's id: the subagent's workflow id, unique in the namespace. */
  slot: string;
  /** The workflow a later answer is signalled to, and whose closing frees the slot: the subagent itself. */
  owner: string;
  /** Slots rotate between keys: by default the lead run's id, so one run cannot starve another. */
  fairness_key: string;
  /** For the state query and the Web UI: `general-purpose: Part a`. */
  label?: string;
  /** The pool asked (absent: `subagents`). */
  pool?: AdmissionPool;
  /**
   * Asked again after a silence (the admission workflow may have been reset): answered with where the slot
   * stands. A repeat without it (the requester's own task retried) is not answered: its first answer is on its
   * way, or already in the requester's history.
   */
  again?: true;
}

/** An answer on its way to the workflow that asked. */
export interface AdmissionDelivery {
  owner: string;
  answer: AdmissionAnswer;
}

export type AdmissionAnswer =
  | { slot: string; outcome: 'granted' }
  /** Waiting: `running` and `queued` as they were when the request joined the queue (it included). */
  | { slot: string; outcome: 'queued'; running: number; queued: number }
  /** Refused before the child started: capacity full, or the queue timeout passed. */
  | { slot: string; outcome: 'refused'; error: string };

/**
 * Subagent → admission workflow. Answered by `admissionAnswerSignal` at once (granted, queued or refused), and
 * for a queued request again when it is granted or times out. Idempotent by slot: asking again answers with
 * where the slot stands.
 */
export const acquireSlotSignal = defineSignal<[SlotRequest]>('admission_acquire');
/** Gives a slot back, or withdraws a queued request (idempotent: an unknown slot is ignored). */
export const releaseSlotSignal = defineSignal<[{ slot: string }]>('admission_release');
/** Admission workflow → the subagent that asked. */
export const admissionAnswerSignal = defineSignal<[AdmissionAnswer]>('admission_answer');

/** What a worker declares when it starts: its settings are the ones in force from then on. */
export interface WorkerDeclaration {
  identity: string;
  settings: AdmissionSettings;
  /** ISO 8601. */
  at: string;
  /** Set when the worker shuts down: it no longer runs with these settings. */
  left?: true;
}
export const declareWorkerSignal = defineSignal<[WorkerDeclaration]>('admission_declare_worker');

/**
 * Leases: a worker holds spare slots of a large pool (`max_running` ≥ LEASE_MIN_RUNNING, no start rate; up to a
 * quarter of it) and grants them in its own process, inside the asking workflow's task: no signal, no answer, no
 * task of the admission workflow on a delegation's path. The worker reports what it granted (and renews the
 * lease) by one Update per batch; the reply says which spare slots it may still grant. Spare slots count against
 * `max_running`; while any request waits in the queue, leases get none and give theirs back at their next report.
 */
export const LEASE_MIN_RUNNING = 32;

/** A lease not renewed for this long is given up (its worker is gone): its spare slots are free again. */
export const LEASE_TTL_MS = 30_000;

/** A slot granted from a lease: what the asking workflow's local activity returns instead of a signal. */
export interface LeaseGrant {
  outcome: 'granted';
  /** The lease's token it took. */
  lease: string;
}

/** A worker's report to a pool's admission workflow (an Update): what it granted since, what it wants. */
export interface LeaseReport {
  /** The lease: one per worker and pool, unique (its identity and a random part). */
  lease: string;
  /** The worker's identity, for the state query. */
  identity: string;
  /** One more than the worker's previous report. */
  seq: number;
  /** The seq of the last reply the worker applied: spare slots it dropped since are free from now on. */
  ack: number;
  /** Spare slots granted since the last report, each to the request that took it. */
  assigned: { token: string; request: SlotRequest }[];
  /**
   * Slots whose grant was in the report still in flight when they ended: given back here, after their grant, so
   * the release cannot reach the admission workflow first. Every other slot goes back by signal.
   */
  released?: string[];
  /** Spare slots wanted (0: give back every one). */
  want: number;
}

export interface LeaseReply {
  /** The report's seq. */
  seq: number;
  /** Every spare slot the worker may grant now; any other it held is taken back. */
  spare: string[];
}

/** A lease as the admission workflow keeps it (and carries over continue-as-new). */
export interface LeaseHold {
  lease: string;
  identity: string;
  /** Spare slots as the worker may still see them, those being taken back included. */
  tokens: string[];
  /** Taken back by the reply to report `seq`: free once the worker acknowledges that reply. */
  revoking: { token: string; seq: number }[];
  /** ISO 8601: the last report. */
  renewed_at: string;
  /** Tokens made for this lease so far (their ids count up). */
  made: number;
}

/** Worker → admission workflow: report and renew a lease; answered with its spare slots. */
export const leaseReportUpdate = defineUpdate<LeaseReply, [LeaseReport]>('admission_lease');

export interface SlotHolder {
  slot: string;
  owner: string;
  fairness_key: string;
  label?: string;
  /** ISO 8601: when it was granted. */
  since: string;
}

export interface QueuedRequest extends Omit<SlotHolder, 'since'> {
  /** ISO 8601: when it joined the queue. */
  queued_at: string;
}

export interface AdmissionCounters {
  granted: number;
  queued: number;
  /** Refused at once: capacity full or the `reject` policy. */
  rejected: number;
  timed_out: number;
  released: number;
  /** Given back for owners that closed without releasing (terminated, or gone): the sweep's work. */
  reclaimed: number;
}

export interface AdmissionState {
  settings: AdmissionSettings;
  /** Granted slots, oldest first. */
  running: SlotHolder[];
  /** Waiting requests, in arrival order (they are granted in rotation between fairness keys). */
  queued: QueuedRequest[];
  counters: AdmissionCounters;
  /** The latest declaration of each worker (most recent last), the newest being the settings in force. */
  workers: WorkerDeclaration[];
  /** Spare slots leased to workers (they count against `max_running`). */
  leases?: LeaseHold[];
}

export const admissionStateQuery = defineQuery<AdmissionState>('admission_state');

/** `max_running 3, max_queued 64, policy queue, queue timeout 300 s` (+ the start rate, when set). */
export function describeAdmission(settings: AdmissionSettings): string {
  const rate =
    settings.max_starts_per_second === undefined ? '' : `, ${settings.max_starts_per_second} starts/s`;
  return (
    `max_running ${settings.max_running}, max_queued ${settings.max_queued}, ` +
    `policy ${settings.admission_policy}, queue timeout ${settings.queue_timeout_seconds} s${rate}`
  );
}

export function sameAdmissionSettings(a: AdmissionSettings, b: AdmissionSettings): boolean {
  return (
    a.max_running === b.max_running &&
    a.max_queued === b.max_queued &&
    a.admission_policy === b.admission_policy &&
    a.queue_timeout_seconds === b.queue_timeout_seconds &&
    a.max_starts_per_second === b.max_starts_per_second
  );
}
