// scripted.ts still imports the activity context from here; its import moves to '../activity-context' with
// issue 10's other changes to that file, and this file goes then.
export { currentAttempt, whileHeartbeating } from '../activity-context';
