/**
 * The page `subagents serve` serves (docs/live.md): one static HTML document with plain JavaScript, no
 * framework. It follows a run's stream (the tree, each agent's text growing) and keeps its inbox (the calls
 * held for a decision, the questions) with Approve / Deny (reason) / Answer, sent to the server, which sends
 * the CLI's Updates. Everything the run says is put in as text, never as markup.
 */
export const LIVE_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>subagents live</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d232b; background: #f5f6f8; }
  header { display: flex; gap: 8px; align-items: center; padding: 10px 16px; background: #1d232b; color: #fff; }
  header input { font: inherit; padding: 3px 6px; }
  header .who { margin-left: auto; opacity: .85; }
  main { display: grid; grid-template-columns: minmax(0, 2fr) minmax(280px, 1fr); gap: 16px; padding: 16px; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  .agent { background: #fff; border: 1px solid #d6dae0; border-radius: 6px; margin: 0 0 10px; padding: 8px 10px; }
  .agent .head { display: flex; gap: 8px; font-weight: 600; }
  .agent .state { font-weight: 400; color: #5a6472; }
  .agent pre { white-space: pre-wrap; margin: 6px 0 0; font: 13px/1.4 ui-monospace, monospace; }
  .agent .tools { margin: 4px 0 0; padding: 0; list-style: none; color: #3d4c5e; font-size: 12px; }
  .agent[data-depth="1"] { margin-left: 20px; } .agent[data-depth="2"] { margin-left: 40px; }
  .item { background: #fff8e6; border: 1px solid #e8c766; border-radius: 6px; padding: 8px; margin: 0 0 10px; }
  .item code { display: block; white-space: pre-wrap; font-size: 12px; margin: 4px 0; }
  .item input { width: 100%; box-sizing: border-box; margin: 4px 0; }
  #ended { padding: 8px 10px; border-radius: 6px; background: #e5f4ea; display: none; white-space: pre-wrap; }
  #ended.failed { background: #fbe7e7; }
  #notice { color: #a33; min-height: 1.2em; }
</style>
</head>
<body>
<header>
  <strong>subagents live</strong>
  <label>run <input id="run" size="34" placeholder="lead run id"></label>
  <button id="open">Open</button>
  <label>token <input id="token" type="password" size="16"></label>
  <span class="who" id="who">not signed in</span>
</header>
<main>
  <section>
    <h2>Tree</h2>
    <div id="ended"></div>
    <div id="tree"></div>
  </section>
  <section>
    <h2>Inbox</h2>
    <div id="notice"></div>
    <div id="inbox"><p>Nothing waits on a person.</p></div>
  </section>
</main>
<script>
'use strict';
const $ = (id) => document.getElementById(id);
const state = { runId: '', agents: new Map(), lastId: '', ended: false, controller: null, canDecide: false };

function el(tag, props, children) {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  for (const child of children || []) node.append(child);
  return node;
}

function headers(json) {
  const h = {};
  const token = $('token').value.trim();
  if (token) h.authorization = 'Bearer ' + token;
  if (json) h['content-type'] = 'application/json';
  return h;
}

function agentPanel(path, agent) {
  let panel = state.agents.get(path);
  if (!panel) {
    const name = el('span', { className: 'name', textContent: path === '' ? 'lead' : path });
    const kind = el('span', { className: 'state', textContent: agent || '' });
    const status = el('span', { className: 'state status', textContent: 'started' });
    const text = el('pre', { className: 'text' });
    const tools = el('ul', { className: 'tools' });
    const node = el('div', { className: 'agent' }, [el('div', { className: 'head' }, [name, kind, status]), text, tools]);
    node.dataset.path = path;
    node.dataset.depth = String(path === '' ? 0 : Math.min(path.split('/').length, 2));
    panel = { node, text, tools, status, kind, turnStart: 0 };
    state.agents.set(path, panel);
    const tree = $('tree');
    const after = [...tree.children].filter((n) => n.dataset.path < path && path.startsWith(n.dataset.path)).pop();
    if (path !== '' && after) after.after(node); else tree.append(node);
  }
  if (agent && !panel.kind.textContent) panel.kind.textContent = agent;
  return panel;
}

function toolLine(panel, text) {
  panel.tools.append(el('li', { textContent: text }));
}

function take(event) {
  if (event.kind === 'run_ended') return ended(event);
  if (event.kind === 'waiting_approval' || event.kind === 'question') return refreshInbox();
  if (event.kind === 'task_event') {
    const e = event.event || {};
    if (e.task_id && String(e.type).startsWith('task_')) {
      const panel = agentPanel(e.task_id, e.subagent_type || '');
      if (e.type !== 'task_started' && e.type !== 'task_running') panel.status.textContent = e.type.replace('task_', '');
    }
    return;
  }
  const panel = agentPanel(event.path, event.agent);
  switch (event.kind) {
    case 'agent_started': panel.status.textContent = 'started'; break;
    case 'turn_started': panel.turnStart = panel.text.textContent.length; panel.status.textContent = 'turn ' + ((event.turn || 0) + 1); break;
    case 'interrupted':
      panel.text.textContent = panel.text.textContent.slice(0, panel.turnStart);
      panel.status.textContent = 'retrying (attempt ' + event.attempt + ')';
      break;
    case 'text': panel.text.textContent += event.text; break;
    case 'tool_call': toolLine(panel, '→ ' + event.tool_call.name); break;
    case 'tool_result': toolLine(panel, '← ' + event.tool_result.name + (event.tool_result.is_error ? ' (error)' : '') + ': ' + event.tool_result.content.slice(0, 160)); break;
    case 'turn_ended':
      panel.text.textContent = panel.text.textContent.slice(0, panel.turnStart) + (event.text || '');
      if (event.text) panel.text.textContent += '\\n';
      panel.turnStart = panel.text.textContent.length;
      break;
    case 'turn_failed': toolLine(panel, '✗ ' + (event.error || 'failed')); break;
  }
}

function ended(event) {
  state.ended = true;
  const box = $('ended');
  box.style.display = 'block';
  box.className = event.status === 'completed' ? 'completed' : 'failed';
  box.textContent = 'Run ' + event.status + (event.stop_reason ? ' (' + event.stop_reason + ')' : '') +
    (event.error ? ': ' + event.error : '') + (event.text ? '\\n\\n' + event.text : '');
  box.dataset.status = event.status;
  refreshInbox();
}

async function follow() {
  const controller = new AbortController();
  state.controller = controller;
  while (!state.ended && !controller.signal.aborted) {
    try {
      const h = headers(false);
      if (state.lastId) h['last-event-id'] = state.lastId;
      const response = await fetch('/runs/' + encodeURIComponent(state.runId) + '/stream', { headers: h, signal: controller.signal });
      if (!response.ok) {
        $('notice').textContent = response.status === 401
          ? 'stream: this server wants a token to watch (401): give yours above'
          : 'stream: ' + response.status + ', trying again';
        await pause(2000);
        continue;
      }
      $('notice').textContent = '';
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf('\\n\\n')) >= 0) {
          frame(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch (err) {
      if (controller.signal.aborted) return;
    }
    if (!state.ended) await pause(1000);
  }
}

function frame(text) {
  let data = '';
  let kind = 'message';
  for (const line of text.split('\\n')) {
    if (line.startsWith('id: ')) state.lastId = line.slice(4);
    else if (line.startsWith('event: ')) kind = line.slice(7);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  if (kind === 'message' && data) take(JSON.parse(data));
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(action, body) {
  $('notice').textContent = '';
  const response = await fetch('/runs/' + encodeURIComponent(state.runId) + '/' + action, {
    method: 'POST', headers: headers(true), body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) $('notice').textContent = answer.error || ('refused: ' + response.status);
  refreshInbox();
}

/** The agent an inbox item is of: its delegation path (the ref without its last part) and its type. */
function whose(ref, agent) {
  const path = ref.split('/').slice(0, -1).join('/');
  return path ? path + ' (' + agent + ')' : agent;
}

function decisionItem(approval) {
  const reason = el('input', { placeholder: 'reason (to deny)', className: 'reason' });
  const approve = el('button', { textContent: 'Approve', className: 'approve', disabled: !state.canDecide });
  const deny = el('button', { textContent: 'Deny', className: 'deny', disabled: !state.canDecide });
  approve.onclick = () => post('approve', { ref: approval.ref });
  deny.onclick = () => post('deny', { ref: approval.ref, reason: reason.value });
  const node = el('div', { className: 'item approval' }, [
    el('strong', { textContent: whose(approval.ref, approval.asked_by) + ' wants to run ' + approval.tool }),
    el('code', { textContent: approval.args }),
    el('div', { textContent: 'held by ' + (approval.policy_id || 'a rule') + ': ' + (approval.reason || '') }),
    reason, approve, ' ', deny,
  ]);
  node.dataset.ref = approval.ref;
  return node;
}

function questionItem(question) {
  const answer = el('input', { placeholder: 'your answer', className: 'answer-text' });
  const send = el('button', { textContent: 'Answer', className: 'answer', disabled: !state.canDecide });
  send.onclick = () => {
    if (!answer.value.trim()) {
      $('notice').textContent = 'type an answer first';
      return;
    }
    post('answer', { question: question.ref, answer: answer.value });
  };
  const node = el('div', { className: 'item question' }, [
    el('strong', { textContent: whose(question.ref, question.asked_by) + ' asks:' }),
    el('div', { textContent: question.question }),
    ...(question.options || []).map((option) => el('div', { textContent: '• ' + option })),
    answer, send,
  ]);
  node.dataset.ref = question.ref;
  return node;
}

let inboxKey = '';
let inboxAsked = 0;
async function refreshInbox() {
  if (!state.runId) return;
  // Only the newest request's answer is shown: an older one may come back later with what was.
  const mine = ++inboxAsked;
  const response = await fetch('/runs/' + encodeURIComponent(state.runId) + '/inbox', { headers: headers(false) }).catch(() => null);
  if (!response || !response.ok || mine !== inboxAsked) return;
  const { approvals, questions } = await response.json();
  if (mine !== inboxAsked) return;
  const key = JSON.stringify([approvals.map((a) => a.ref), questions.map((q) => q.ref), state.canDecide]);
  if (key === inboxKey) return;
  inboxKey = key;
  const inbox = $('inbox');
  // An item still waiting keeps its node, and with it what the person is typing in it.
  const kept = new Map([...inbox.querySelectorAll('.item')].map((node) => [node.className + ' ' + node.dataset.ref, node]));
  const reuse = (node) => {
    const old = kept.get(node.className + ' ' + node.dataset.ref);
    if (!old) return node;
    for (const button of old.querySelectorAll('button')) button.disabled = !state.canDecide;
    return old;
  };
  inbox.replaceChildren(...approvals.map(decisionItem).map(reuse), ...questions.map(questionItem).map(reuse));
  if (!approvals.length && !questions.length) inbox.append(el('p', { textContent: 'Nothing waits on a person.' }));
}

async function whoami() {
  const response = await fetch('/whoami', { headers: headers(false) }).catch(() => null);
  const me = response && response.ok ? await response.json() : { person: null, can_decide: false };
  state.canDecide = me.can_decide;
  $('who').textContent = me.person ? 'signed in as ' + me.person : 'not signed in: watching only';
  inboxKey = '';
  refreshInbox();
}

function open(runId) {
  if (state.controller) state.controller.abort();
  Object.assign(state, { runId, agents: new Map(), lastId: '', ended: false });
  $('tree').replaceChildren();
  $('ended').style.display = 'none';
  $('run').value = runId;
  history.replaceState(null, '', '/runs/' + encodeURIComponent(runId));
  follow();
  refreshInbox();
}

$('token').value = localStorage.getItem('subagents-token') || '';
$('token').onchange = () => { localStorage.setItem('subagents-token', $('token').value); whoami(); };
$('open').onclick = () => open($('run').value.trim());
setInterval(() => { if (!state.ended) refreshInbox(); }, 1500);
whoami();
const fromPath = /^\\/runs\\/([^/]+)/.exec(location.pathname);
const initial = fromPath ? decodeURIComponent(fromPath[1]) : new URLSearchParams(location.search).get('run');
if (initial) open(initial);
</script>
</body>
</html>
`;
