// Asking before acting: a dialog of the page's own (never the browser's
// confirm(), which stops the page and cannot say much), with a title that
// carries the numbers the action will touch, lines that say what it does,
// and two buttons. Escape or a click beside it cancels.

import {h} from './dom.js';

let open = null; // the dialog shown, at most one

// ask shows the dialog and resolves to true when the operator confirms.
// title: "Purge 12 waiting events?"; lines: strings or nodes, one paragraph
// each; ok: the confirming button's words; danger: the action removes
// something for good (the button is red, and Cancel has the focus).
export function ask({title, lines = [], ok = 'OK', danger = false}) {
  if (open) open.cancel();
  return new Promise((resolve) => {
    const okBtn = h('button', {type: 'button', class: 'btn ' + (danger ? 'danger' : 'primary'), text: ok, 'data-confirm': 'ok'});
    const cancelBtn = h('button', {type: 'button', class: 'btn', text: 'Cancel', 'data-confirm': 'cancel'});
    const box = h('div', {class: 'confirm-box', role: 'alertdialog', 'aria-modal': 'true', 'aria-labelledby': 'confirm-title'},
      h('h2', {id: 'confirm-title', text: title}),
      lines.filter(Boolean).map((l) => h('p', {}, l)),
      h('div', {class: 'confirm-buttons'}, cancelBtn, okBtn));
    const overlay = h('div', {class: 'overlay confirm', id: 'confirm'}, box);
    const done = (answer) => {
      document.removeEventListener('keydown', onKey, true);
      overlay.remove();
      open = null;
      resolve(answer);
    };
    const onKey = (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        done(false);
      }
    };
    okBtn.addEventListener('click', () => done(true));
    cancelBtn.addEventListener('click', () => done(false));
    overlay.addEventListener('click', (e) => {
      if (e.target === overlay) done(false);
    });
    document.addEventListener('keydown', onKey, true);
    document.body.appendChild(overlay);
    open = {cancel: () => done(false)};
    (danger ? cancelBtn : okBtn).focus();
  });
}
