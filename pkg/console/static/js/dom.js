// Building the page's elements. Every string reaches the page as text
// (a text node or an attribute value), never as markup: data from events
// and resources cannot add elements or run script.

const SVG = 'http://www.w3.org/2000/svg';

// h builds an HTML element. attrs: "class", "text" (its text), "on<event>"
// (a listener), "hidden"/"disabled"/"checked" (booleans), anything else an
// attribute set with setAttribute. Children: nodes, strings (as text),
// arrays of either, or null/undefined/false (skipped).
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s builds an SVG element, as h does.
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') el.textContent = String(v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'hidden' || k === 'disabled' || k === 'checked') el[k] = Boolean(v);
    else if (k === 'value') el.value = String(v);
    else if (k === 'style' || k === 'innerHTML') throw new Error('dom: ' + k + ' is never set');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// fill replaces el's children.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// panel is a titled section of a view, with an optional toolbar.
export function panel(title, opts = {}, ...body) {
  return h('section', {class: 'panel ' + (opts.class || ''), id: opts.id},
    h('div', {class: 'panel-head'}, h('h2', {text: title}), opts.tools || null),
    h('div', {class: 'panel-body'}, ...body));
}

// notice is a one-line message inside a panel: kind "muted", "error" or
// "unavailable".
export function notice(kind, text) {
  return h('p', {class: 'notice ' + kind, text});
}

// jsonBlock shows a value as indented JSON text.
export function jsonBlock(value) {
  let text;
  try {
    text = JSON.stringify(value, null, 2);
  } catch {
    text = String(value);
  }
  return h('pre', {class: 'json', text});
}
