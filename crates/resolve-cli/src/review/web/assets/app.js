// The review page of `resolve review --web`: plain script, no build step, nothing loaded from
// elsewhere. The server holds the truth; this page keeps the reviewer's choices (kept or
// rejected hunks, line comments) until they are sent with an apply, and saves each change as
// the action's review in progress, which a reload or the terminal review picks up.
'use strict';
(function () {
  const TOKEN = new URL(document.currentScript.src).searchParams.get('token');
  const S = {
    actions: [], version: null, origin: '', current: null, cursor: 0, view: 'unified',
    decisions: {}, // id -> { version, rejected: { address: reason } }
    comments: {}, // id -> [{ path, line, side, text, comment }]
    open: {}, // id -> whether an ast_edit preview's rewrite row is open
    pending: 'apply', busy: false,
  };
  const $ = (id) => document.getElementById(id);

  function esc(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
  }

  // `keepalive` lets the request finish after the page is left.
  async function api(path, body, keepalive) {
    const init = { headers: { 'X-Resolve-Token': TOKEN }, keepalive: Boolean(keepalive) };
    if (body !== undefined) {
      init.method = 'POST';
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    const data = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) throw new Error(data.error || response.statusText);
    return data;
  }

  function status(text, error) {
    const line = $('status');
    line.textContent = text || '';
    line.className = error ? 'error' : '';
  }

  // ---- the model as the page keeps it ----
  function current() { return S.actions.find((a) => a.id === S.current) || null; }
  function visibleActions() { return S.actions.filter((a) => !S.origin || a.origin === S.origin); }
  function decisionsOf(action) {
    let d = S.decisions[action.id];
    if (!d || d.version !== action.version) {
      d = { version: action.version, rejected: {} };
      S.decisions[action.id] = d;
    }
    return d;
  }
  function hunksOf(action) {
    const out = [];
    action.files.forEach((file, f) => file.hunks.forEach((hunk) => out.push({ file, f, hunk })));
    return out;
  }
  function keptOfTotal(action) {
    const rejected = decisionsOf(action).rejected;
    const all = hunksOf(action);
    return [all.filter((h) => !(h.hunk.address in rejected)).length, all.length];
  }

  // After an amendment or a change elsewhere, a decision stays on a hunk whose address, header
  // and lines are unchanged (as in the terminal review); the others start kept again.
  function hunkKey(hunk) { return hunk.header + '\n' + JSON.stringify(hunk.lines); }
  function carryDecisions(old, next) {
    const d = S.decisions[old.id];
    if (!d || d.version === next.version) return;
    const before = new Map();
    old.files.forEach((f) => f.hunks.forEach((h) => before.set(h.address, hunkKey(h))));
    const rejected = {};
    next.files.forEach((f) => f.hunks.forEach((h) => {
      if (h.address in d.rejected && before.get(h.address) === hunkKey(h)) rejected[h.address] = d.rejected[h.address];
    }));
    S.decisions[old.id] = { version: next.version, rejected };
    saveDraft(next);
  }

  // A review in progress saved for an action this page has no choices for yet (by an earlier
  // page or the terminal review) becomes its choices, when made on the version shown.
  function adoptDraft(action, draft) {
    if (!draft || S.decisions[action.id] || S.comments[action.id]) return;
    if (draft.actionVersion === action.version) {
      const rejected = {};
      draft.rejected.forEach((r) => { rejected[r.address] = r.reason || ''; });
      S.decisions[action.id] = { version: action.version, rejected };
    }
    if (draft.comments.length) S.comments[action.id] = draft.comments.slice();
  }

  // Save the choices made on `action` as its review in progress; typing a reason saves once
  // the typing pauses, or when the page is left first. Saves do not wait for one another (the
  // one sent as the page is left cannot), so each carries this page's id and a number that
  // grows, and the server ignores a save older than one it already kept from this page.
  const saving = {}; // id -> { timer, send } of a save waiting for the typing to pause
  const PAGE = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  let saves = 0;
  function saveDraft(action, later) {
    if (saving[action.id]) clearTimeout(saving[action.id].timer);
    delete saving[action.id];
    const send = (leaving) => {
      delete saving[action.id];
      const rejected = decisionsOf(action).rejected;
      saves += 1;
      api('/api/draft', {
        id: action.id, version: action.version, page: PAGE, sequence: saves,
        rejected: Object.keys(rejected).map((address) => ({ address, reason: rejected[address] || null })),
        comments: S.comments[action.id] || [],
      }, leaving === true).catch((error) => status(`The review in progress was not saved: ${error.message}`, true));
    };
    if (later) saving[action.id] = { timer: setTimeout(send, 400), send };
    else send();
  }
  window.addEventListener('pagehide', () => {
    for (const pending of Object.values(saving)) { clearTimeout(pending.timer); pending.send(true); }
  });

  // The text of line `number` on `side` of `path` in the action now, or null when not shown.
  function lineNow(action, path, side, number) {
    const file = action.files.find((f) => f.path === path);
    if (!file) return null;
    for (const hunk of file.hunks) {
      const row = numbered(hunk).find((r) => (side === 'old' ? r.old : r.new) === number);
      if (row) return row.text;
    }
    return null;
  }

  // Reload the actions; unless `force`, nothing is redrawn when they did not change (a poll and
  // a reload after a decision may cross).
  async function load(force) {
    const data = await api('/api/actions');
    if (!force && data.version === S.version) return;
    for (const next of data.actions) {
      const old = S.actions.find((a) => a.id === next.id);
      if (old) carryDecisions(old, next);
      adoptDraft(next, (data.drafts || {})[next.id]);
    }
    S.actions = data.actions;
    S.version = data.version;
    const shown = visibleActions();
    if (!current() || !shown.includes(current())) {
      S.current = shown.length ? shown[0].id : null;
      S.cursor = 0;
    }
    render();
  }

  // ---- drawing ----
  function render() {
    renderSidebar();
    renderAction();
  }

  function renderSidebar() {
    const origins = [...new Set(S.actions.map((a) => a.origin))].sort();
    const select = $('origin');
    select.innerHTML = '<option value="">all</option>' +
      origins.map((o) => `<option value="${esc(o)}"${o === S.origin ? ' selected' : ''}>${esc(o)}</option>`).join('');
    $('actions').innerHTML = visibleActions().map((a) => {
      const [kept, total] = keptOfTotal(a);
      return `<li data-id="${esc(a.id)}" class="${a.id === S.current ? 'current' : ''}">` +
        `<div>${esc(a.label)}</div><div class="meta">${esc(a.origin)} · ${esc(a.age)} · ${kept}/${total} hunks kept` +
        `${a.foreign ? ' · <strong>staged by another user</strong>' : ''}</div></li>`;
    }).join('');
  }

  function renderAction() {
    const action = current();
    $('view-unified').className = S.view === 'unified' ? 'on' : '';
    $('view-split').className = S.view === 'split' ? 'on' : '';
    if (!action) {
      $('label').textContent = 'Nothing is pending';
      $('action-id').textContent = '';
      $('files').innerHTML = '';
      $('diff').innerHTML = '<p class="empty-state">No pending actions. New previews appear here as they are staged.</p>';
      return;
    }
    $('label').textContent = action.label;
    $('action-id').textContent = action.id;
    const rejected = decisionsOf(action).rejected;
    $('files').innerHTML = '<tbody>' + action.files.map((file, f) => {
      const off = file.hunks.filter((h) => h.address in rejected).length;
      return `<tr><td><a href="#file-${f}">${esc(file.path)}</a></td><td>${file.kind}</td>` +
        `<td class="count-add">+${file.added}</td><td class="count-del">−${file.removed}</td>` +
        `<td>${file.stale ? 'changed since the preview' : `${file.hunks.length} ${file.hunks.length === 1 ? 'hunk' : 'hunks'}${off ? `, ${off} rejected` : ''}`}</td></tr>`;
    }).join('') + '</tbody>';
    const parts = [];
    if (action.note) parts.push(`<p>${esc(action.note.trim())}</p>`);
    const rewrite = rewriteRow(action);
    if (rewrite) parts.push(rewrite);
    action.files.forEach((file, f) => parts.push(renderFile(action, file, f, rejected)));
    $('diff').innerHTML = parts.join('');
    $('diff').classList.toggle('collapsed', Boolean(rewrite) && !S.open[action.id]);
    markCursor(false);
  }

  // An ast_edit preview reads by rewrite: "12 replacements of `$X.unwrap()` → `…`" as one row
  // that opens into its hunks.
  function rewriteRow(action) {
    if (!action.rewrites || !action.rewrites.length) return null;
    const count = (/(\d+) replacements?/.exec(action.label) || [null, '?'])[1];
    const noun = count === '1' ? 'replacement' : 'replacements';
    const rules = action.rewrites.map((r) => `<code>${esc(r.pat)}</code> → <code>${esc(r.out)}</code>`).join('; ');
    const what = action.rewrites.length === 1 ? `of ${rules}` : `by ${action.rewrites.length} rewrites: ${rules}`;
    const hunks = hunksOf(action).length;
    const [kept] = keptOfTotal(action);
    const open = S.open[action.id];
    return `<div class="rewrite" role="button" tabindex="0">${open ? '▾' : '▸'} ${count} ${noun} ${what}` +
      ` <span class="meta">(${hunks} hunks in ${action.files.length} files, ${kept} kept)</span></div>`;
  }
  function openRewrite() {
    const action = current();
    if (action && !S.open[action.id] && action.rewrites && action.rewrites.length) {
      S.open[action.id] = true;
      const keep = S.cursor;
      render();
      S.cursor = keep;
    }
  }

  function renderFile(action, file, f, rejected) {
    const all = (S.comments[action.id] || []).filter((c) => c.path === file.path);
    // A comment keeps a copy of its line: when the line changed, it is shown apart, never on other code.
    const comments = all.filter((c) => lineNow(action, c.path, c.side, c.line) === c.text);
    const moved = all.filter((c) => !comments.includes(c)).map((c) =>
      `<div class="group">Comment on a line that changed since (${esc(c.path)}:${c.line} was <code>${esc(c.text)}</code>): ${esc(c.comment)}</div>`).join('');
    const hunks = moved + file.hunks.map((hunk) => renderHunk(action, file, hunk, rejected, comments)).join('');
    const head = `<h3><span class="path">${esc(file.path)}</span><span>${file.kind}</span>` +
      `<span class="count-add">+${file.added}</span><span class="count-del">−${file.removed}</span>` +
      (file.kind !== 'delete' && !file.stale ? `<button type="button" class="edit" data-path="${esc(file.path)}">Edit</button>` : '') + '</h3>';
    const stale = file.stale ? '<p class="group">This file changed since the preview; its hunks cannot be shown or applied.</p>' : '';
    return `<section class="file" id="file-${f}">${head}${stale}${hunks}</section>`;
  }

  function renderHunk(action, file, hunk, rejected, comments) {
    const off = hunk.address in rejected;
    const reason = off ? rejected[hunk.address] || '' : '';
    const head = `<div class="hunk-head"><span class="addr">${esc(hunk.address)}</span><code>${esc(hunk.header)}</code>` +
      `<button type="button" class="toggle">${off ? 'Rejected' : 'Kept'}</button>` +
      (off ? `<input class="hunk-reason" type="text" placeholder="Why it is left out (optional)" value="${esc(reason)}">` : '') + '</div>';
    const rows = S.view === 'split' ? splitRows(file, hunk, comments) : unifiedRows(file, hunk, comments);
    return `<section class="hunk${off ? ' rejected' : ''}" data-address="${esc(hunk.address)}" data-path="${esc(file.path)}">` +
      `${head}<table class="diff"><tbody>${rows}</tbody></table></section>`;
  }

  function numbered(hunk) {
    const m = /@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(hunk.header) || [0, 1, 1];
    let oldLine = Number(m[1]), newLine = Number(m[2]);
    return hunk.lines.map((line) => {
      const text = line.segments.map((s) => s[0]).join('');
      const out = { line, text, old: null, new: null };
      if (line.kind === 'context') { out.old = oldLine++; out.new = newLine++; }
      else if (line.kind === 'removed') out.old = oldLine++;
      else if (line.kind === 'added') out.new = newLine++;
      return out;
    });
  }

  function commentRows(comments, side, number, span) {
    return comments.filter((c) => c.side === side && c.line === number).map((c) =>
      `<tr class="comment"><td colspan="${span}"><span class="quote">${esc(c.path)}:${c.line} ${esc(c.text)}</span>\n${esc(c.comment)}</td></tr>`).join('');
  }

  function lnCell(side, number) {
    return number == null ? '<td class="ln"></td>' : `<td class="ln" data-side="${side}" data-line="${number}">${number}</td>`;
  }

  function unifiedRows(file, hunk, comments) {
    return numbered(hunk).map((row) => {
      const sign = { added: '+', removed: '-', context: ' ', nonewline: '\\' }[row.line.kind];
      const own = row.line.kind === 'removed' ? ['old', row.old] : ['new', row.new];
      return `<tr class="${row.line.kind}">${lnCell('old', row.old)}${lnCell('new', row.new)}` +
        `<td class="sign">${sign}</td><td class="code">${code(file.path, row.line)}</td></tr>` +
        (own[1] != null ? commentRows(comments, own[0], own[1], 4) : '');
    }).join('');
  }

  function splitRows(file, hunk, comments) {
    const rows = numbered(hunk);
    const out = [];
    let i = 0;
    while (i < rows.length) {
      if (rows[i].line.kind !== 'removed' && rows[i].line.kind !== 'added') {
        out.push([rows[i], rows[i]]);
        i++;
        continue;
      }
      const removed = [], added = [];
      while (i < rows.length && rows[i].line.kind === 'removed') removed.push(rows[i++]);
      while (i < rows.length && rows[i].line.kind === 'nonewline') removed.push(rows[i++]);
      while (i < rows.length && rows[i].line.kind === 'added') added.push(rows[i++]);
      for (let k = 0; k < Math.max(removed.length, added.length); k++) out.push([removed[k] || null, added[k] || null]);
    }
    return out.map(([left, right]) => {
      const cell = (row, side) => row
        ? `${lnCell(side, side === 'old' ? row.old : row.new)}<td class="code ${row.line.kind}">${code(file.path, row.line)}</td>`
        : '<td class="ln"></td><td class="code empty"></td>';
      const notes = (left && left.old != null ? commentRows(comments, 'old', left.old, 4) : '') +
        (right && right.new != null ? commentRows(comments, 'new', right.new, 4) : '');
      return `<tr>${cell(left, 'old')}${cell(right, 'new')}</tr>${notes}`;
    }).join('');
  }

  // ---- syntax highlighting (a small tokenizer per comment style; changed words stay marked) ----
  const KEYWORDS = new Set(('as async await break case class const continue def default do elif else enum export extends false fn for from func function go if impl import in interface let loop match mod mut None nil null package pub return self Self static struct super switch trait true True False type use var where while with yield').split(' '));
  function commentStyle(path) {
    return /\.(py|sh|bash|toml|ya?ml|rb|r|pl|conf|cfg|ini|mk)$|(^|\/)(Makefile|Dockerfile)$/i.test(path) ? '#' : '//';
  }
  function highlight(text, style) {
    const comment = style === '#' ? '#.*$' : '\\/\\/.*$';
    const re = new RegExp(`(${comment})|("(?:[^"\\\\]|\\\\.)*"?|'(?:[^'\\\\]|\\\\.)*'?)|(\\b\\d[\\w.]*\\b)|([A-Za-z_][\\w]*)`, 'g');
    let out = '', at = 0, m;
    while ((m = re.exec(text))) {
      out += esc(text.slice(at, m.index));
      const cls = m[1] ? 'com' : m[2] ? 'str' : m[3] ? 'num' : KEYWORDS.has(m[4]) ? 'kw' : null;
      out += cls ? `<span class="tok-${cls}">${esc(m[0])}</span>` : esc(m[0]);
      at = m.index + m[0].length;
    }
    return out + esc(text.slice(at));
  }
  function code(path, line) {
    if (line.kind === 'nonewline') return esc(line.segments.map((s) => s[0]).join(''));
    const style = commentStyle(path);
    return line.segments.map(([text, changed]) => changed ? `<mark>${highlight(text, style)}</mark>` : highlight(text, style)).join('');
  }

  // ---- the cursor and the decisions ----
  function hunkElements() { return [...document.querySelectorAll('#diff .hunk')]; }
  function markCursor(scroll) {
    const all = hunkElements();
    if (!all.length) return;
    S.cursor = Math.max(0, Math.min(S.cursor, all.length - 1));
    all.forEach((el, i) => el.classList.toggle('cursor', i === S.cursor));
    if (scroll) all[S.cursor].scrollIntoView({ block: 'nearest' });
  }
  function cursorHunk() { return hunkElements()[S.cursor] || null; }

  function setRejected(address, rejected, reason) {
    const action = current();
    if (!action) return;
    const d = decisionsOf(action).rejected;
    if (rejected) d[address] = reason || d[address] || '';
    else delete d[address];
    saveDraft(action);
    const keep = S.cursor;
    render();
    S.cursor = keep;
    markCursor(false);
  }

  function focusReasonOf(address) {
    const el = [...document.querySelectorAll('#diff .hunk')].find((h) => h.dataset.address === address);
    const input = el && el.querySelector('.hunk-reason');
    if (input) input.focus();
  }

  function applyBody(action, reason) {
    const rejected = decisionsOf(action).rejected;
    return {
      id: action.id, version: action.version, reason,
      rejected: Object.keys(rejected).map((address) => ({ address, reason: rejected[address] || null })),
      comments: S.comments[action.id] || [],
    };
  }

  async function resolveAction(kind) {
    const action = current();
    if (!action || S.busy) return;
    const reason = $('reason').value.trim();
    if (!reason) {
      S.pending = kind;
      $('reason').focus();
      status(`Type the reason for the ${kind}, then press Enter.`);
      return;
    }
    S.busy = true;
    try {
      const body = kind === 'apply' ? applyBody(action, reason) : { id: action.id, reason, comments: S.comments[action.id] || [] };
      const result = await api(`/api/${kind}`, body);
      delete S.decisions[action.id];
      delete S.comments[action.id];
      $('reason').value = '';
      await load();
      status(result.text.split('\n')[0]);
    } catch (error) {
      status(error.message.split('\n')[0], true);
    } finally {
      S.busy = false;
    }
  }

  // ---- the check ----
  async function runCheck() {
    const action = current();
    if (!action || S.busy) return;
    S.busy = true;
    status(`Running the check against ${action.id}…`);
    const out = $('check-output');
    try {
      const result = await api('/api/check', { id: action.id });
      const [first, ...rest] = result.text.split('\n');
      status(first);
      out.textContent = rest.join('\n').trim();
      out.hidden = !out.textContent;
    } catch (error) {
      status(error.message.split('\n')[0], true);
      out.hidden = true;
    } finally {
      S.busy = false;
    }
  }

  // ---- line comments ----
  function openCommentForm(cell) {
    const action = current();
    const hunk = cell.closest('.hunk');
    if (!action || !hunk) return;
    const side = cell.dataset.side, line = Number(cell.dataset.line);
    const row = cell.closest('tr');
    const text = (side === 'old' ? row.querySelector('td.code') : [...row.querySelectorAll('td.code')].pop()).textContent;
    document.querySelectorAll('tr.comment-form').forEach((r) => r.remove());
    const form = document.createElement('tr');
    form.className = 'comment-form';
    form.innerHTML = `<td colspan="4"><textarea placeholder="Comment on ${esc(hunk.dataset.path)}:${line}"></textarea>` +
      '<button type="button" class="save-comment">Comment</button> <button type="button" class="cancel-comment">Cancel</button></td>';
    form.dataset.side = side;
    form.dataset.line = String(line);
    form.dataset.text = text;
    form.dataset.path = hunk.dataset.path;
    row.after(form);
    form.querySelector('textarea').focus();
  }

  function saveComment(form) {
    const action = current();
    const comment = form.querySelector('textarea').value.trim();
    if (!action || !comment) { form.remove(); return; }
    (S.comments[action.id] = S.comments[action.id] || []).push({
      path: form.dataset.path, line: Number(form.dataset.line), side: form.dataset.side, text: form.dataset.text, comment,
    });
    saveDraft(action);
    const keep = S.cursor;
    render();
    S.cursor = keep;
    markCursor(false);
    status(`Comment kept for ${form.dataset.path}:${form.dataset.line}; it reaches the model with the apply or discard.`);
  }

  // ---- amending a file ----
  async function openEditor(path) {
    const action = current();
    if (!action) return;
    try {
      const data = await api(`/api/content?id=${encodeURIComponent(action.id)}&path=${encodeURIComponent(path)}`);
      $('editor-path').textContent = `Amend ${path}`;
      $('editor-text').value = data.content;
      $('editor').dataset.path = path;
      $('editor').dataset.id = action.id;
      $('editor').dataset.version = action.version;
      $('editor').hidden = false;
      $('editor-text').focus();
    } catch (error) {
      status(error.message, true);
    }
  }

  async function saveEditor() {
    const box = $('editor');
    const path = box.dataset.path;
    try {
      const result = await api('/api/amend', { id: box.dataset.id, version: box.dataset.version, path, content: $('editor-text').value });
      box.hidden = true;
      await load();
      status(result.amended ? `Amended ${path}; its hunks are recomputed.` : `${path} is unchanged; nothing amended.`);
    } catch (error) {
      status(error.message.split('\n')[0], true);
    }
  }

  // ---- events ----
  document.addEventListener('click', (event) => {
    const target = event.target;
    const item = target.closest('#actions li');
    if (item) { S.current = item.dataset.id; S.cursor = 0; render(); return; }
    const rewrite = target.closest('.rewrite');
    if (rewrite) {
      const action = current();
      if (action) { S.open[action.id] = !S.open[action.id]; render(); }
      return;
    }
    if (target.classList.contains('toggle')) {
      const hunk = target.closest('.hunk');
      S.cursor = hunkElements().indexOf(hunk);
      setRejected(hunk.dataset.address, !hunk.classList.contains('rejected'));
      return;
    }
    if (target.classList.contains('ln') && target.dataset.line) { openCommentForm(target); return; }
    if (target.classList.contains('save-comment')) { saveComment(target.closest('tr')); return; }
    if (target.classList.contains('cancel-comment')) { target.closest('tr').remove(); return; }
    if (target.classList.contains('edit')) { openEditor(target.dataset.path); return; }
    if (target.id === 'apply') resolveAction('apply');
    else if (target.id === 'discard') resolveAction('discard');
    else if (target.id === 'check') runCheck();
    else if (target.id === 'view-unified' || target.id === 'view-split') { S.view = target.id === 'view-split' ? 'split' : 'unified'; render(); }
    else if (target.id === 'editor-save') saveEditor();
    else if (target.id === 'editor-cancel') $('editor').hidden = true;
    else if (target.id === 'help') $('help').hidden = true;
  });

  document.addEventListener('input', (event) => {
    const input = event.target;
    if (!input.classList.contains('hunk-reason')) return;
    const action = current();
    const address = input.closest('.hunk').dataset.address;
    if (action) { decisionsOf(action).rejected[address] = input.value; saveDraft(action, true); }
  });

  $('origin').addEventListener('change', (event) => { S.origin = event.target.value; S.current = null; load(true); });

  $('reason').addEventListener('keydown', (event) => {
    if (event.key === 'Enter') { event.preventDefault(); resolveAction(S.pending); }
  });

  document.addEventListener('keydown', (event) => {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(event.target.tagName);
    if (event.key === 'Escape') {
      if (typing) event.target.blur();
      $('help').hidden = true;
      $('editor').hidden = true;
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || event.altKey || !$('editor').hidden) return;
    // Moving through hunks or deciding one opens an ast_edit preview's rewrite row first.
    if (['j', 'k', 'ArrowDown', 'ArrowUp', ' ', 'r', 'c', 'e'].includes(event.key)) openRewrite();
    const hunk = cursorHunk();
    const shown = visibleActions();
    const at = shown.indexOf(current());
    switch (event.key) {
      case 'j': case 'ArrowDown': S.cursor++; markCursor(true); break;
      case 'k': case 'ArrowUp': S.cursor--; markCursor(true); break;
      case ' ': if (hunk) setRejected(hunk.dataset.address, !hunk.classList.contains('rejected')); break;
      case 'r': if (hunk) { setRejected(hunk.dataset.address, true); focusReasonOf(hunk.dataset.address); } break;
      case 'c': if (hunk) { const cell = hunk.querySelector('tr.added td.ln[data-line], tr.removed td.ln[data-line], td.ln[data-line]'); if (cell) openCommentForm(cell); } break;
      case 'e': if (hunk) openEditor(hunk.dataset.path); break;
      case 'a': S.pending = 'apply'; resolveAction('apply'); break;
      case 'd': S.pending = 'discard'; resolveAction('discard'); break;
      case 'n': if (at + 1 < shown.length) { S.current = shown[at + 1].id; S.cursor = 0; render(); } break;
      case 'p': if (at > 0) { S.current = shown[at - 1].id; S.cursor = 0; render(); } break;
      case '?': $('help').hidden = !$('help').hidden; break;
      default: return;
    }
    event.preventDefault();
  });

  // New previews and decisions made elsewhere appear without a reload.
  async function poll() {
    try {
      const data = await api('/api/version');
      if (data.version !== S.version && !S.busy) {
        const editing = document.activeElement && /^(INPUT|TEXTAREA)$/.test(document.activeElement.tagName);
        if (!editing && $('editor').hidden) await load();
      }
    } catch (error) {
      status(`The review server does not answer: ${error.message}`, true);
    }
  }

  load().catch((error) => status(error.message, true));
  setInterval(poll, 1500);
})();
