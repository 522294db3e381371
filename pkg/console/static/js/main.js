// The console's entry point: the router (each view has its own URL, in
// the fragment), the SAS key prompt, and the refresh loop.

import {fill, notice} from './dom.js';
import * as api from './api.js';
import * as overview from './overview.js';
import * as topicView from './topic.js';
import * as subView from './subscription.js';
import {Health} from './health.js';

const REFRESH_MS = 2000;

const view = document.getElementById('view');
const flash = document.getElementById('flash');
const conn = document.getElementById('conn');
const forget = document.getElementById('forget');
const dlg = document.getElementById('auth');
const keyInput = document.getElementById('auth-key');
const authMsg = document.getElementById('auth-msg');
const keyFields = document.getElementById('auth-keyfields');
const authTitle = document.getElementById('auth-title');
const reload = document.getElementById('auth-reload');
const health = new Health(document.getElementById('health'), (stale) => {
  // Greyed out while the broker does not answer: what shows is its last
  // answer, not the present.
  document.body.classList.toggle('stale', stale);
  if (stale) document.body.dataset.stale = 'true';
  else delete document.body.dataset.stale;
});

let current = null; // {refresh, unmount} of the view shown
let busy = false;
let again = false; // a refresh was asked for while one ran
let authWanted = false;

// route reads the fragment: #/, #/topics/{t}, #/topics/{t}/subscriptions/{s}.
function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  if (parts[0] === 'topics' && parts.length === 2) return {mod: topicView, params: {topic: parts[1]}, name: 'topic'};
  if (parts[0] === 'topics' && parts[2] === 'subscriptions' && parts.length === 4) {
    return {mod: subView, params: {topic: parts[1], sub: parts[3]}, name: 'subscription'};
  }
  return {mod: overview, params: {}, name: 'overview'};
}

function show() {
  if (current?.unmount) current.unmount();
  const r = route();
  document.body.dataset.view = r.name;
  delete document.body.dataset.loaded; // until this view's first refresh
  document.title = (r.params.sub || r.params.topic || 'Overview') + ' · edgegrid console';
  current = r.mod.mount(view, r.params);
  window.scrollTo(0, 0);
  tick();
}

// tick refreshes the view, one refresh at a time; soon asks for one more
// when one is under way (an action's outcome must show).
async function tick(soon) {
  if (busy && soon) again = true;
  if (busy || !current || authWanted) return;
  busy = true;
  again = false;
  try {
    await current.refresh();
    fill(flash);
    document.body.dataset.loaded = 'true';
  } catch (e) {
    if (e instanceof api.ApiError && e.unauthorized) return;
    // An unanswered call is the health notice's to say, once, above.
    if (e instanceof api.ApiError && e.network) fill(flash);
    else fill(flash, notice('error', 'Could not load this view: ' + (e.message || e)));
  } finally {
    busy = false;
    if (again) tick(false);
  }
}

function setConn(ok) {
  health.reach(ok);
  if (authWanted) return;
  conn.textContent = ok ? 'connected' : 'broker not answering';
  conn.className = 'conn ' + (ok ? 'ok' : 'bad');
}

// askKey shows the prompt for a credential, saying what the broker's 401
// says it takes (err.challenges) and what was wrong: a broker that takes
// client certificates only gets no key prompt, but says whether the browser
// presented none or presented one that was refused; a refusal of a key the
// page sent says so; a refusal with none sent says the broker needs a
// credential.
function askKey(err) {
  if (authWanted) return;
  authWanted = true;
  const ch = err?.challenges;
  const cert = ch?.ClientCertificate;
  const takesKey = !ch || 'SharedAccessKey' in ch;
  const had = api.sasKey();
  let text;
  let status;
  if (!takesKey) {
    status = cert?.error === 'refused' ? 'certificate refused' : 'certificate needed';
    text = cert?.error === 'refused' ?
      'This broker takes client certificates only, and it refused the certificate your browser presented. ' + brokerSays(err) + ' Present one the broker trusts, then reload this page.' :
      'This broker takes client certificates only, and your browser presented none. ' +
      (location.protocol === 'http:' ?
        'No certificate can be presented over plain HTTP: open the console over HTTPS, with a client certificate the broker trusts.' :
        'Import a client certificate the broker trusts into the browser (or its operating system\'s store), then reload this page.');
  } else if (had) {
    status = 'key refused';
    text = 'The broker refused this SAS key (401 Unauthorized). Check it against the broker\'s inbound__clientAuth__sasKeys__key1 or key2, and enter it again.';
  } else {
    status = 'key needed';
    text = cert?.error === 'refused' ?
      'The broker refused the client certificate your browser presented. ' + brokerSays(err) + ' Enter a SAS key (key1 or key2 of inbound__clientAuth__sasKeys) instead.' :
      'This broker needs a credential. Enter a SAS key (key1 or key2 of inbound__clientAuth__sasKeys)' +
      (cert || !ch ? ', or open the console with a client certificate the broker trusts.' : '.');
  }
  authMsg.className = 'auth-msg' + (had || !takesKey || cert?.error === 'refused' ? ' error' : '');
  authMsg.textContent = text;
  authTitle.textContent = takesKey ? 'Authentication needed' : 'Client certificate needed';
  keyFields.hidden = !takesKey;
  reload.hidden = takesKey;
  keyInput.value = '';
  dlg.hidden = false;
  document.body.classList.add('locked');
  conn.textContent = status;
  conn.className = 'conn bad';
  if (takesKey) keyInput.focus();
}

// brokerSays is the broker's own account of a refusal, from its message:
// the part after "and ", which says what was missing or refused.
function brokerSays(err) {
  const m = /, and (.*)$/.exec(err?.message || '');
  if (!m) return '';
  const said = m[1].charAt(0).toUpperCase() + m[1].slice(1);
  return 'The broker says: ' + (said.endsWith('.') ? said : said + '.');
}

reload.addEventListener('click', () => location.reload());

document.getElementById('auth-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const key = keyInput.value.trim();
  if (!key) return;
  api.setSasKey(key);
  dlg.hidden = true;
  document.body.classList.remove('locked');
  authWanted = false;
  forget.hidden = false;
  show();
});

forget.addEventListener('click', () => {
  api.setSasKey('');
  forget.hidden = true;
  show();
});

api.listen({onAuth: askKey, onReach: setConn, onAnswer: (p, v) => health.answer(p, v)});
forget.hidden = !api.sasKey();
window.addEventListener('hashchange', show);
// An action done: show what it changed at once.
document.addEventListener('console-refresh', () => tick(true));
setInterval(() => {
  if (!document.hidden) tick();
}, REFRESH_MS);
show();
