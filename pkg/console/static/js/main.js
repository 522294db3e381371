// The console's entry point: the router (each view has its own URL, in
// the fragment), the SAS key prompt, and the refresh loop.

import {fill, notice} from './dom.js';
import * as api from './api.js';
import * as overview from './overview.js';
import * as topicView from './topic.js';
import * as subView from './subscription.js';

const REFRESH_MS = 2000;

const view = document.getElementById('view');
const flash = document.getElementById('flash');
const conn = document.getElementById('conn');
const forget = document.getElementById('forget');
const dlg = document.getElementById('auth');
const keyInput = document.getElementById('auth-key');
const authMsg = document.getElementById('auth-msg');

let current = null; // {refresh, unmount} of the view shown
let busy = false;
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
  document.title = (r.params.sub || r.params.topic || 'Overview') + ' · edgegrid console';
  current = r.mod.mount(view, r.params);
  window.scrollTo(0, 0);
  tick();
}

// tick refreshes the view, one refresh at a time.
async function tick() {
  if (busy || !current || authWanted) return;
  busy = true;
  try {
    await current.refresh();
    fill(flash);
    document.body.dataset.loaded = 'true';
  } catch (e) {
    if (e instanceof api.ApiError && e.unauthorized) return;
    fill(flash, notice('error', (e instanceof api.ApiError && e.network ? '' : 'Could not load this view: ') + (e.message || e)));
  } finally {
    busy = false;
  }
}

function setConn(ok) {
  conn.textContent = ok ? 'connected' : 'broker unreachable';
  conn.className = 'conn ' + (ok ? 'ok' : 'bad');
}

// askKey shows the key prompt. A refusal of a key the page sent says so;
// a refusal with none sent says the broker needs a credential.
function askKey() {
  if (authWanted) return;
  authWanted = true;
  const had = api.sasKey();
  authMsg.className = 'auth-msg' + (had ? ' error' : '');
  authMsg.textContent = had ?
    'The broker refused this SAS key (401 Unauthorized). Check it against the broker\'s inbound__clientAuth__sasKeys__key1 or key2, and enter it again.' :
    'This broker needs a credential. Enter a SAS key (key1 or key2 of inbound__clientAuth__sasKeys), or open the console with a client certificate the broker trusts.';
  keyInput.value = '';
  dlg.hidden = false;
  document.body.classList.add('locked');
  conn.textContent = had ? 'key refused' : 'key needed';
  conn.className = 'conn bad';
  keyInput.focus();
}

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

api.listen({onAuth: askKey, onReach: setConn});
forget.hidden = !api.sasKey();
window.addEventListener('hashchange', show);
setInterval(() => {
  if (!document.hidden) tick();
}, REFRESH_MS);
show();
