/**
 * Which id a delegation gets. A tool-call id comes from the model and is only a label: a provider may number
 * calls per response (`call_0` again at every turn), repeat an id within one response, or send one too long
 * for a workflow id. The model's id is kept when it is short, plain and new in this ledger; otherwise the
 * delegation gets `d<n>`, chosen deterministically from the ledger (workflow state), so a replay picks the same.
 */

/** Characters and length a model's id may have to name a child workflow (`<lead id>/task/<id>`). */
const PLAIN_ID = /^[A-Za-z0-9_.:-]{1,64}$/;

/** One id per call, in order: the model's where it is plain and unused, else the next free `d<n>`. */
export function assignDelegationIds(callIds: readonly string[], taken: Iterable<string>): string[] {
  const used = new Set(taken);
  return callIds.map((id) => {
    let chosen = id;
    if (!PLAIN_ID.test(id) || used.has(id)) {
      // `d<n>`: the n-th delegation of this ledger (the next number free, should the model have taken it).
      let n = used.size + 1;
      while (used.has(`d${n}`)) n += 1;
      chosen = `d${n}`;
    }
    used.add(chosen);
    return chosen;
  });
}
