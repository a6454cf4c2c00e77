// Drives the page of `resolve review --web` in Chromium (puppeteer-core, the system browser).
// Run by crates/resolve-cli/tests/suite/web_browser.rs, which checks the files, `resolve log`
// and the note the model receives afterwards. Environment: RESOLVE_PUPPETEER_DIR (where
// puppeteer-core is installed), RESOLVE_CHROMIUM (the browser), REVIEW_URL, SCENARIO (`flow`,
// `large` or `resume`), SCREENSHOTS (a directory), RESOLVE_BIN and RESOLVE_ROOT (to stage a preview while
// the page is open). Prints one JSON line of measurements; any failure exits non-zero.
'use strict';
const path = require('path');
const { execFileSync } = require('child_process');
const puppeteer = require(path.join(process.env.RESOLVE_PUPPETEER_DIR, 'node_modules', 'puppeteer-core'));

const url = process.env.REVIEW_URL;
const shots = process.env.SCREENSHOTS;
const problems = [];

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function statusText(page) {
  return page.$eval('#status', (el) => el.textContent);
}

async function waitStatus(page, fragment) {
  await page.waitForFunction((f) => document.getElementById('status').textContent.includes(f), { timeout: 20000 }, fragment)
    .catch(async () => { throw new Error(`status never said ${JSON.stringify(fragment)}: ${await statusText(page)}`); });
}

async function flow(page) {
  await page.goto(url);
  await page.waitForSelector('.hunk');
  // An ast_edit preview reads by rewrite: one row that opens into its hunks.
  const row = await page.$eval('.rewrite', (el) => el.textContent);
  check(row.includes('3 replacements of foo($A) → bar($A)'), `the rewrite row: ${row}`);
  await page.screenshot({ path: path.join(shots, 'by-rewrite.png') });
  await page.click('.rewrite');
  await page.waitForSelector('.file', { visible: true });
  await page.screenshot({ path: path.join(shots, 'review.png'), fullPage: true });
  const addresses = await page.$$eval('.hunk', (all) => all.map((h) => h.dataset.address));
  check(JSON.stringify(addresses) === JSON.stringify(['src/lib.rs#1', 'src/lib.rs#2', 'src/main.rs#1']), `hunks ${addresses}`);
  const marked = await page.$$eval('tr.added mark', (all) => all.map((m) => m.textContent));
  check(marked.some((m) => m.includes('bar')), `changed words marked: ${marked}`);

  // The terminal's keys: ? shows the help, j moves the cursor, space rejects and keeps.
  await page.keyboard.press('?');
  check(await page.$eval('#help', (el) => !el.hidden), 'help shown');
  await page.screenshot({ path: path.join(shots, 'help.png') });
  await page.keyboard.press('Escape');
  await page.keyboard.press('j');
  check(await page.$eval('.hunk.cursor', (el) => el.dataset.address) === 'src/lib.rs#2', 'j moves to the second hunk');
  await page.keyboard.press(' ');
  check(await page.$eval('.hunk.cursor', (el) => el.classList.contains('rejected')), 'space rejects');
  await page.keyboard.press(' ');
  check(!(await page.$eval('.hunk.cursor', (el) => el.classList.contains('rejected'))), 'space keeps again');

  // A comment on src/main.rs:1, which the amendment below changes.
  await page.click('.hunk[data-address="src/main.rs#1"] tr.added td.ln[data-side="new"]');
  await page.type('tr.comment-form textarea', 'Why main?');
  await page.click('tr.comment-form .save-comment');
  await page.waitForSelector('.hunk[data-address="src/main.rs#1"] tr.comment');

  // Amend src/main.rs in the browser.
  await page.click('button.edit[data-path="src/main.rs"]');
  await page.waitForSelector('#editor:not([hidden])');
  await page.$eval('#editor-text', (el) => { el.value = 'fn main() { bar(1); println!("amended"); }\n'; });
  await page.screenshot({ path: path.join(shots, 'amend.png') });
  await page.click('#editor-save');
  await waitStatus(page, 'Amended src/main.rs');
  // The comment keeps its copy of the line: shown apart, never on the amended line.
  check(!(await page.$('.hunk[data-address="src/main.rs#1"] tr.comment')), 'the comment moved onto other code');
  const apart = await page.$eval('#file-1 .group', (el) => el.textContent);
  check(apart.includes('fn main() { bar(1); }') && apart.includes('Why main?'), `the comment apart: ${apart}`);

  // Reject src/lib.rs#2 with a reason (r, then type).
  await page.click('.hunk[data-address="src/lib.rs#2"] .toggle');
  await page.type('.hunk[data-address="src/lib.rs#2"] .hunk-reason', 'g stays on foo.');
  // A comment on the first added line of src/lib.rs#1.
  await page.click('.hunk[data-address="src/lib.rs#1"] tr.added td.ln[data-side="new"]');
  await page.type('tr.comment-form textarea', 'Is bar safe here?');
  await page.click('tr.comment-form .save-comment');
  await page.waitForSelector('tr.comment');

  await page.click('#view-split');
  await page.screenshot({ path: path.join(shots, 'side-by-side.png'), fullPage: true });
  await page.click('#view-unified');

  // A preview staged elsewhere appears without a reload.
  execFileSync(process.env.RESOLVE_BIN, ['--root', process.env.RESOLVE_ROOT, 'ast-edit', '-p', 'baz($A)', '-r', 'qux($A)', 'other.rs'], { stdio: 'ignore' });
  await page.waitForFunction(() => document.querySelectorAll('#actions li').length === 2, { timeout: 15000 });
  check(await page.$eval('.hunk[data-address="src/lib.rs#2"]', (el) => el.classList.contains('rejected')), 'the rejection survives the refresh');

  await page.type('#reason', 'Keep g; f and main move.');
  await page.keyboard.press('Enter');
  await waitStatus(page, 'Applied');
  await page.screenshot({ path: path.join(shots, 'applied.png'), fullPage: true });
  return { applied: await statusText(page) };
}

// A review in progress survives leaving the page: marks, a reason and a comment made, the page
// opened again, all three still there (saved as the action's review in progress).
async function resume(page) {
  await page.goto(url);
  await page.waitForSelector('.hunk');
  await page.click('.hunk[data-address="b.txt#1"] .toggle');
  await page.type('.hunk[data-address="b.txt#1"] .hunk-reason', 'b stays.');
  await page.click('.hunk[data-address="a.txt#1"] tr.added td.ln[data-side="new"]');
  await page.type('tr.comment-form textarea', 'Why A?');
  // Saving the comment saves the reason typed before it too; leave only once that save is done.
  const saved = page.waitForResponse((response) => response.url().endsWith('/api/draft')
    && (response.request().postData() || '').includes('Why A?'), { timeout: 20000 });
  await page.click('tr.comment-form .save-comment');
  await page.waitForSelector('tr.comment');
  check((await saved).ok(), 'the review in progress was saved');
  await page.goto('about:blank');
  await page.goto(url);
  await page.waitForSelector('.hunk');
  const rejected = await page.$$eval('.hunk.rejected', (all) => all.map((h) => h.dataset.address));
  check(JSON.stringify(rejected) === JSON.stringify(['b.txt#1']), `rejected after reopening: ${rejected}`);
  const reason = await page.$eval('.hunk[data-address="b.txt#1"] .hunk-reason', (el) => el.value);
  check(reason === 'b stays.', `the reason after reopening: ${reason}`);
  const comment = await page.$eval('tr.comment', (el) => el.textContent);
  check(comment.includes('Why A?'), `the comment after reopening: ${comment}`);

  // More of the reason, typed just before leaving (no pause to save it), is saved on the way
  // out; the page is opened again until the server has it, at most 20 s.
  await page.focus('.hunk[data-address="b.txt#1"] .hunk-reason');
  await page.keyboard.press('End');
  await page.keyboard.type(' Really.');
  await page.goto('about:blank');
  const until = Date.now() + 20000;
  let typedLast = '';
  while (typedLast !== 'b stays. Really.' && Date.now() < until) {
    await page.goto(url);
    await page.waitForSelector('.hunk');
    typedLast = await page.$eval('.hunk[data-address="b.txt#1"] .hunk-reason', (el) => el.value);
  }
  check(typedLast === 'b stays. Really.', `the reason typed just before leaving: ${typedLast}`);
  return { resumed: true };
}

async function large(page) {
  const started = Date.now();
  await page.goto(url);
  await page.waitForFunction(() => document.querySelectorAll('#diff .hunk').length >= 2000, { timeout: 60000 });
  const loaded = Date.now() - started;
  // The page still answers: a key moves the cursor and a frame is drawn. The times are
  // reported, not judged (they follow the machine's load: a key took 2.2 s once while other
  // builds ran); a page that does not answer within 10 s is frozen.
  const keyStarted = Date.now();
  await page.keyboard.press('j');
  await page.waitForFunction(() => document.querySelectorAll('.hunk.cursor').length === 1, { timeout: 10000 })
    .catch(() => { throw new Error('the page froze: a key did not move the cursor within 10 s'); });
  const key = Date.now() - keyStarted;
  const pollStarted = Date.now();
  await Promise.race([
    page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve()))),
    new Promise((_, reject) => setTimeout(() => reject(new Error('the page froze: no frame within 10 s')), 10000)),
  ]);
  const frame = Date.now() - pollStarted;
  await page.screenshot({ path: path.join(shots, 'large.png') });
  return { loadedMs: loaded, keyMs: key, frameMs: frame };
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: process.env.RESOLVE_CHROMIUM,
    headless: true,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'],
  });
  let result;
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 900 });
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(String(error)));
    // Nothing but the server itself is ever asked for.
    page.on('request', (request) => {
      if (!request.url().startsWith(new URL(url).origin)) problems.push(`loaded from outside: ${request.url()}`);
    });
    const scenarios = { flow, large, resume };
    result = await scenarios[process.env.SCENARIO](page);
  } finally {
    await browser.close();
  }
  check(problems.length === 0, `the page reported: ${problems.join(' | ')}`);
  console.log(JSON.stringify(result));
})().catch((error) => {
  console.error(error && error.stack ? error.stack : String(error));
  process.exit(1);
});
