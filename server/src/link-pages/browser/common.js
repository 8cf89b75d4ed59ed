// Shared by every link page: calls to the API of the origin that served the page, and one place
// where the page says what happened. Runs in the browser; no external requests (the page's CSP
// allows none).
/* exported api, say, show, busy */
'use strict';

// Pages sit one level down (/auth/..., /invitations/...), so the API is at ../api/v2/ even when a
// proxy serves the platform under a path prefix.
const API = new URL('../api/v2/', location.href);

/** One API call: `{ ok, status, data }` or `{ ok: false, status, detail }`, never a throw. */
async function api(method, path, options = {}) {
  const headers = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let res;
  try {
    res = await fetch(new URL(path, API), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: 'no-store',
      credentials: 'omit',
      keepalive: options.keepalive === true,
    });
  } catch {
    return {
      ok: false,
      status: 0,
      detail: 'The server could not be reached. Check the connection and try again.',
    };
  }
  let data = null;
  try {
    data = res.status === 204 ? null : await res.json();
  } catch {
    data = null;
  }
  if (res.ok) return { ok: true, status: res.status, data };
  return { ok: false, status: res.status, code: data && data.code, detail: describe(res, data) };
}

/**
 * What a refusal says to a person: for a request the contract refuses, the fields and why (the
 * detail is about the contract); else the problem's detail, written for people.
 */
function describe(res, problem) {
  if (
    problem &&
    problem.code === 'invalid-request' &&
    Array.isArray(problem.errors) &&
    problem.errors.length > 0
  ) {
    return problem.errors
      .map((e) => {
        const field = String(e.pointer || '')
          .split('/')
          .pop()
          .replace(/_/g, ' ');
        return field ? `The ${field} ${e.message}.` : `${e.message}.`;
      })
      .join(' ');
  }
  if (problem && typeof problem.detail === 'string' && problem.detail) return problem.detail;
  return `The server answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}.`;
}

/** Says what happened in the page's status line: `kind` is working, done or failed. */
function say(kind, text) {
  const status = document.getElementById('status');
  status.dataset.kind = kind;
  status.textContent = text;
  status.hidden = false;
}

function show(id, visible = true) {
  document.getElementById(id).hidden = !visible;
}

/** Runs `fn` with the form's fields disabled, so a double click sends one request. */
async function busy(form, fn) {
  const fields = form.querySelectorAll('input, button');
  for (const f of fields) f.disabled = true;
  try {
    await fn();
  } finally {
    for (const f of fields) f.disabled = false;
  }
}
