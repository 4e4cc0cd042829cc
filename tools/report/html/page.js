// The page rtlctl writes for `report --html`, `report --diff --html` and
// `compare --html` (docs/report.md): it reads the run's data from the
// <script type="application/json" id="rtl-data"> element and draws it with
// d3 (Debian's node-d3, inlined when the page was written). Everything is
// SVG or DOM, drawn once, without transitions, so the same data give the
// same document (tests/bats/report_html.bats reads it back). The last line
// marks the body rendered="ok"; an error marks it with its message.
'use strict';

const DATA = JSON.parse(document.getElementById('rtl-data').textContent);
const num = d3.format(',');
const app = d3.select('#app');

// ---- small helpers ----

function get(o, k, dflt) {
  return o && Object.prototype.hasOwnProperty.call(o, k) ? o[k] : dflt;
}

function int(o, k) {
  const v = get(o, k, 0);
  return typeof v === 'number' && isFinite(v) ? v : 0;
}

function traps(o) {
  return int(o, 'read_traps') + int(o, 'write_traps');
}

function bytes(v) {
  if (v >= 10 * 1048576) return (v / 1048576).toFixed(1) + ' MiB';
  if (v >= 10 * 1024) return (v / 1024).toFixed(1) + ' KiB';
  return num(v) + ' B';
}

function ms(ns) {
  return (ns / 1e6).toFixed(3) + ' ms';
}

function signed(v, f) {
  return (v > 0 ? '+' : v < 0 ? '\u2212' : '\u00b1') + (f || num)(Math.abs(v));
}

function section(parent, id, title) {
  const s = parent.append('section').attr('id', id);
  s.append('h2').text(title);
  return s;
}

// A color per rule, the same in every chart of the page.
const ruleColor = d3.scaleOrdinal(d3.schemeCategory10);

// A figure: its value in data-value, shown formatted.
function figure(parent, id, label, value, shown) {
  const d = parent.append('div').attr('class', 'figure');
  d.append('div').attr('class', 'label').text(label);
  const v = d.append('div').attr('class', 'value').attr('data-value', value).text(shown);
  if (id) v.attr('id', id);
  return d;
}

// ---- sortable tables ----

// columns: [{key, label, value(row), text(row), num}]; a click on a header
// sorts by it (again: the other way). initial: {key, asc}.
function table(parent, id, columns, rows, initial) {
  const t = parent.append('table').attr('id', id).attr('class', 'sortable');
  const head = t.append('thead').append('tr');
  const body = t.append('tbody');
  let by = initial && initial.key, asc = initial ? !!initial.asc : false;

  function draw() {
    const col = columns.find(c => c.key === by);
    const sorted = rows.slice();
    if (col)
      sorted.sort((a, b) => {
        const x = col.value(a), y = col.value(b);
        const c = x < y ? -1 : x > y ? 1 : 0;
        return asc ? c : -c;
      });
    head.selectAll('th').data(columns).join('th')
        .attr('class', c => (c.num ? 'num' : '') + (c.key === by ? (asc ? ' asc' : ' desc') : ''))
        .attr('data-key', c => c.key)
        .text(c => c.label)
        .on('click', c => {
          asc = c.key === by ? !asc : !c.num;
          by = c.key;
          draw();
        });
    const tr = body.selectAll('tr').data(sorted).join('tr');
    tr.selectAll('td').data(r => columns.map(c => ({ c, r }))).join('td')
        .attr('class', d => d.c.num ? 'num' : null)
        .attr('data-value', d => d.c.num ? d.c.value(d.r) : null)
        .attr('title', d => d.c.title ? d.c.title(d.r) : null)
        .text(d => (d.c.text || d.c.value)(d.r));
    t.attr('data-sort', by ? by + (asc ? ':asc' : ':desc') : null);
  }
  draw();
  return t;
}

// "#sort=TABLE:KEY:asc" in the page's address sorts that table at first.
function initialSort(id) {
  const m = /(?:^#|&)sort=([^:&]+):([^:&]+)(?::(asc|desc))?/.exec(location.hash);
  return m && m[1] === id ? { key: m[2], asc: m[3] === 'asc' } : null;
}

function sortedTable(parent, id, columns, rows, dflt) {
  return table(parent, id, columns, rows, initialSort(id) || dflt);
}

// ---- the timeline ----

// Per rule: traps and grants per interval, regions live at each interval's
// end; one panel each, time along the bottom. yMax ({traps, grants, live})
// and xMax (ms): scales shared by runs side by side.
function timeline(parent, r, opt) {
  const tl = get(r, 'timeline', null);
  const o = Object.assign({ width: 1040, height: 130, id: 'timeline', yMax: null, xMax: 0 }, opt || {});
  const div = parent.append('div').attr('class', 'timeline').attr('id', o.id);
  const rules = tl && Array.isArray(tl.rules) ? tl.rules : [];
  const n = tl ? int(tl, 'intervals') : 0;
  const width = int(tl, 'interval_ns');
  if (!rules.length || !n || !width) {
    div.append('p').attr('class', 'empty').text('No timeline in this report (reports of rtl 0.3.0 and later have one).');
    return div;
  }
  const kinds = [['traps', 'traps per interval'], ['grants', 'grants per interval'],
                 ['live', 'live regions']];
  const margin = { left: 64, right: 16, top: 18, bottom: 22 };
  const w = o.width - margin.left - margin.right;
  const x = d3.scaleLinear().domain([0, Math.max(n * width / 1e6, o.xMax)]).range([0, w]);
  let total = 0;
  rules.forEach(e => (e.traps || []).forEach(v => { total += v; }));
  div.attr('data-traps', total).attr('data-intervals', n).attr('data-interval-ns', width);
  div.append('p').attr('class', 'caption')
      .text(num(n) + ' intervals of ' + ms(width) + '; ' + num(total) + ' traps counted');
  kinds.forEach(([kind, label]) => {
    let most = 0;
    rules.forEach(e => (e[kind] || []).forEach(v => { most = Math.max(most, v); }));
    if (o.yMax && o.yMax[kind] !== undefined) most = Math.max(most, o.yMax[kind]);
    const svg = div.append('svg').attr('class', 'panel ' + kind)
        .attr('width', o.width).attr('height', o.height + margin.top + margin.bottom);
    const g = svg.append('g').attr('transform', `translate(${margin.left},${margin.top})`);
    const y = d3.scaleLinear().domain([0, most || 1]).nice().range([o.height, 0]);
    g.append('g').attr('class', 'axis x').attr('transform', `translate(0,${o.height})`)
        .call(d3.axisBottom(x).ticks(Math.max(2, Math.floor(w / 90))).tickFormat(v => v + ' ms'));
    g.append('g').attr('class', 'axis y')
        .call(d3.axisLeft(y).ticks(Math.min(4, y.domain()[1])).tickFormat(d3.format('~s')));
    svg.append('text').attr('class', 'panel-title').attr('x', margin.left).attr('y', 12).text(label);
    // A step per interval: the count holds for the whole interval.
    const line = d3.line().curve(d3.curveStepAfter)
        .x((v, i) => x(i * width / 1e6)).y(v => y(v));
    g.selectAll('path.series').data(rules).join('path')
        .attr('class', 'series')
        .attr('data-rule', e => e.rule)
        .attr('data-kind', kind)
        .attr('data-sum', e => d3.sum(e[kind] || []))
        .attr('fill', 'none')
        .attr('stroke', e => ruleColor(e.rule))
        .attr('stroke-width', 1.5)
        .attr('d', e => { const v = (e[kind] || []).slice(); v.push(v.length ? v[v.length - 1] : 0); return line(v); })
        .append('title').text(e => e.rule + ': ' + num(d3.sum(e[kind] || [])) + (kind === 'live' ? ' at most ' + num(d3.max(e[kind] || [0])) : ''));
  });
  const legend = div.append('div').attr('class', 'legend');
  legend.selectAll('span').data(rules).join('span')
      .each(function (e) {
        const s = d3.select(this);
        s.append('i').style('background', ruleColor(e.rule));
        s.append('b').text(e.rule);
      });
  return div;
}

// ---- the flame graph ----

// stacks: [["prog;outer;...;inner", count], ...] (the data behind
// --folded). Boxes from the program at the bottom to the trapping
// function at the top; a click on a box draws it at full width.
function flame(parent, stacks, opt) {
  const o = Object.assign({ width: 1040, row: 18, id: 'flame' }, opt || {});
  const div = parent.append('div').attr('class', 'flame').attr('id', o.id);
  if (!stacks || !stacks.length) {
    div.append('p').attr('class', 'empty')
        .text('No trap backtraces: the backtrace action of on_read or on_write records them.');
    return div;
  }
  const root = { name: '', children: [] };
  stacks.forEach(([stack, count]) => {
    let node = root;
    String(stack).split(';').forEach(name => {
      let c = node.children.find(k => k.name === name);
      if (!c) { c = { name, children: [], value: 0 }; node.children.push(c); }
      node = c;
    });
    node.value += count;
  });
  // The program is the root when every stack starts with it.
  const top = root.children.length === 1 ? root.children[0] : Object.assign(root, { name: 'all' });
  const h = d3.hierarchy(top, d => d.children).sum(d => d.value || 0)
      .sort((a, b) => d3.ascending(a.data.name, b.data.name));
  const depth = h.height + 1;
  const height = depth * o.row;
  div.attr('data-traps', h.value).attr('data-stacks', stacks.length);
  div.append('p').attr('class', 'caption')
      .text(num(stacks.length) + ' stacks, ' + num(h.value) + ' traps; the trapping function on top. Click a box to zoom, the bottom box to zoom out.');
  const svg = div.append('svg').attr('width', o.width).attr('height', height);
  const color = d => {
    const s = d.data.name, i = s.indexOf('!');
    let hash = 0;
    for (const ch of i < 0 ? s : s.slice(0, i)) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
    return d3.hsl(10 + hash % 40, 0.75, 0.55 + (d.depth % 3) * 0.06);
  };
  function draw(focus) {
    d3.partition().size([o.width, height])(h);
    const x = d3.scaleLinear().domain([focus.x0, focus.x1]).range([0, o.width]);
    const shown = h.descendants().filter(d => d.x1 > focus.x0 && d.x0 < focus.x1 &&
                                            x(d.x1) - x(d.x0) >= 0.5);
    const g = svg.selectAll('g.box').data(shown, d => d.ancestors().map(a => a.data.name).join(';'))
        .join(enter => {
          const e = enter.append('g').attr('class', 'box');
          e.append('rect');
          e.append('text');
          e.append('title');
          return e;
        });
    g.attr('transform', d => `translate(${x(d.x0)},${height - (d.depth + 1) * o.row})`)
        .attr('data-name', d => d.data.name).attr('data-value', d => d.value)
        .on('click', d => draw(d === focus && d.parent ? d.parent : d));
    g.select('rect').attr('width', d => Math.max(0, x(d.x1) - x(d.x0) - 1))
        .attr('height', o.row - 1).attr('fill', color);
    g.select('text').attr('x', 3).attr('y', o.row - 5)
        .text(d => {
          const room = Math.floor((x(d.x1) - x(d.x0) - 6) / 6.5);
          const s = d.data.name;
          return room < 3 ? '' : s.length <= room ? s : s.slice(0, room - 1) + '\u2026';
        });
    g.select('title').text(d => d.data.name + '\n' + num(d.value) + ' traps (' +
                                (100 * d.value / h.value).toFixed(1) + '%)');
  }
  draw(h);
  return div;
}

// ---- one run ----

function runHeader(parent, r, title) {
  const run = get(r, 'run', {}), policy = get(r, 'policy', {});
  const end = get(run, 'signal', null) !== null ? 'killed by signal ' + run.signal
      : 'exit ' + get(run, 'exit_status', '?');
  parent.append('h1').text(title + ': ' + get(run, 'program', '?'));
  parent.append('p').attr('class', 'command').text((get(run, 'argv', []) || []).join(' '));
  parent.append('p').attr('class', 'meta').text('pid ' + get(run, 'pid', '?') + ', ' + end + ', ' +
      (int(run, 'duration_ns') / 1e9).toFixed(3) + ' s; policy ' + get(policy, 'source', '?') +
      '; rtl ' + get(r, 'rtl_version', '?'));
}

function summary(parent, r, prefix) {
  const t = get(r, 'totals', {}), p = prefix || '';
  const s = parent.append('div').attr('class', 'figures');
  figure(s, p + 'total-regions', 'regions (of allocations)', int(t, 'selected'),
         num(int(t, 'selected')) + ' of ' + num(int(t, 'allocations')));
  figure(s, p + 'total-traps', 'traps', int(t, 'traps'), num(int(t, 'traps')));
  figure(s, p + 'total-kinds', 'read / write / stale', int(t, 'read_traps'),
         num(int(t, 'read_traps')) + ' / ' + num(int(t, 'write_traps')) + ' / ' + num(int(t, 'stale_traps')));
  figure(s, p + 'total-trap-time', 'time in traps', int(t, 'trap_ns'), ms(int(t, 'trap_ns')));
  figure(s, p + 'total-grants', 'grants', int(t, 'grants'), num(int(t, 'grants')));
  figure(s, p + 'total-peak', 'live regions at most', int(t, 'regions_peak'), num(int(t, 'regions_peak')));
  figure(s, p + 'total-bytes', 'bytes selected', int(t, 'bytes'), bytes(int(t, 'bytes')));
  return s;
}

function notes(parent, r) {
  const n = (get(r, 'notes', []) || []).filter(x => typeof x === 'string');
  if (!n.length) return;
  const ul = parent.append('ul').attr('class', 'notes');
  ul.selectAll('li').data(n).join('li').text(x => x);
}

const ruleColumns = [
  { key: 'name', label: 'rule', value: e => get(e, 'name', '?') },
  { key: 'mechanism', label: 'mechanism', value: e => get(e, 'mechanism', '?') },
  { key: 'selected', label: 'regions', num: 1, value: e => int(e, 'selected'), text: e => num(int(e, 'selected')) },
  { key: 'bytes', label: 'bytes', num: 1, value: e => int(e, 'bytes'), text: e => bytes(int(e, 'bytes')) },
  { key: 'read_traps', label: 'read traps', num: 1, value: e => int(e, 'read_traps'), text: e => num(int(e, 'read_traps')) },
  { key: 'write_traps', label: 'write traps', num: 1, value: e => int(e, 'write_traps'), text: e => num(int(e, 'write_traps')) },
  { key: 'grants', label: 'grants', num: 1, value: e => int(e, 'grants'), text: e => num(int(e, 'grants')) },
  { key: 'granted_bytes', label: 'bytes granted', num: 1, value: e => int(e, 'granted_bytes'), text: e => bytes(int(e, 'granted_bytes')) },
  { key: 'false_sharing_traps', label: 'false sharing', num: 1, value: e => int(e, 'false_sharing_traps'), text: e => num(int(e, 'false_sharing_traps')) },
  { key: 'prot_changes', label: 'protection changes', num: 1, value: e => int(e, 'prot_changes'), text: e => num(int(e, 'prot_changes')) },
];

const siteColumns = [
  { key: 'site', label: 'site', value: e => get(e, 'demangled', get(e, 'site', '?')), title: e => get(e, 'site', '') },
  { key: 'source', label: 'file:line', value: e => get(e, 'line', get(e, 'source', '')), title: e => get(e, 'source', '') },
  { key: 'rule', label: 'rule', value: e => get(e, 'rule', '?') },
  { key: 'regions', label: 'regions', num: 1, value: e => int(e, 'regions'), text: e => num(int(e, 'regions')) },
  { key: 'bytes', label: 'bytes', num: 1, value: e => int(e, 'bytes'), text: e => bytes(int(e, 'bytes')) },
  { key: 'traps', label: 'traps', num: 1, value: traps, text: e => num(traps(e)) },
  { key: 'read_traps', label: 'read', num: 1, value: e => int(e, 'read_traps'), text: e => num(int(e, 'read_traps')) },
  { key: 'write_traps', label: 'write', num: 1, value: e => int(e, 'write_traps'), text: e => num(int(e, 'write_traps')) },
  { key: 'grants', label: 'grants', num: 1, value: e => int(e, 'grants'), text: e => num(int(e, 'grants')) },
];

function reportPage(d) {
  const r = d.report;
  const head = app.append('header');
  runHeader(head, r, 'rtl report');
  section(app, 'summary', 'Summary').call(s => { summary(s, r); notes(s, r); });
  timeline(section(app, 'timeline-section', 'Timeline: traps, grants and live regions per rule'), r);
  flame(section(app, 'flame-section', 'Flame graph of the trapping stacks'), d.folded);
  sortedTable(section(app, 'rules', 'Rules'), 'rules-table', ruleColumns,
              get(r, 'rules', []) || [], null);
  sortedTable(section(app, 'sites', 'Sites'), 'sites-table', siteColumns,
              get(r, 'sites', []) || [], { key: 'traps', asc: false });
}

// ---- two runs: --diff ----

const diffFigures = [['traps', 'traps', num], ['regions', 'regions', num],
                     ['bytes', 'bytes', bytes], ['trap_ns', 'time in traps', ms]];

function diffColumns(nameKey, nameLabel, extra) {
  const cols = [{ key: nameKey, label: nameLabel, value: e => get(e, nameKey === 'site' ? 'demangled' : nameKey, get(e, nameKey, '?')),
                  title: nameKey === 'site' ? e => get(e, 'site', '') : null }].concat(extra || []);
  diffFigures.forEach(([k, label, f]) => {
    cols.push({ key: 'a.' + k, label: label + ' A', num: 1, value: e => int(e.a, k), text: e => f(int(e.a, k)) });
    cols.push({ key: 'b.' + k, label: 'B', num: 1, value: e => int(e.b, k), text: e => f(int(e.b, k)) });
    cols.push({ key: 'change.' + k, label: 'change', num: 1, value: e => int(e.change, k),
                text: e => signed(int(e.change, k), f) });
  });
  return cols;
}

// Horizontal bars of the change in traps, left for fewer, right for more.
function changeBars(parent, rows, label, id) {
  const shown = rows.filter(e => int(e.change, 'traps') !== 0).slice(0, 20);
  const div = parent.append('div').attr('class', 'bars').attr('id', id);
  if (!shown.length) {
    div.append('p').attr('class', 'empty').text('No change in traps.');
    return;
  }
  const w = 1040, left = 420, row = 20, inner = w - left - 20;
  const most = d3.max(shown, e => Math.abs(int(e.change, 'traps')));
  const x = d3.scaleLinear().domain([-most, most]).range([0, inner]);
  const svg = div.append('svg').attr('width', w).attr('height', shown.length * row + 24);
  const g = svg.append('g').attr('transform', `translate(${left},4)`);
  g.append('line').attr('x1', x(0)).attr('x2', x(0)).attr('y1', 0).attr('y2', shown.length * row)
      .attr('class', 'zero');
  const bar = g.selectAll('g.bar').data(shown).join('g').attr('class', 'bar')
      .attr('transform', (e, i) => `translate(0,${i * row})`)
      .attr('data-change', e => int(e.change, 'traps'));
  bar.append('rect').attr('x', e => x(Math.min(0, int(e.change, 'traps'))))
      .attr('width', e => Math.abs(x(int(e.change, 'traps')) - x(0)))
      .attr('height', row - 4).attr('class', e => int(e.change, 'traps') > 0 ? 'more' : 'fewer');
  bar.append('text').attr('x', -8).attr('y', row - 8).attr('text-anchor', 'end')
      .text(e => { const s = label(e); return s.length > 64 ? s.slice(0, 63) + '\u2026' : s; });
  bar.append('text').attr('class', 'amount').attr('y', row - 8)
      .attr('x', e => int(e.change, 'traps') > 0 ? x(int(e.change, 'traps')) + 4 : x(int(e.change, 'traps')) - 4)
      .attr('text-anchor', e => int(e.change, 'traps') > 0 ? 'start' : 'end')
      .text(e => signed(int(e.change, 'traps')));
  g.append('g').attr('transform', `translate(0,${shown.length * row})`)
      .call(d3.axisBottom(x).ticks(6).tickFormat(d3.format('~s')));
}

function diffPage(d) {
  const df = d.diff;
  app.append('header').call(h => {
    h.append('h1').text('rtl report --diff');
    ['a', 'b'].forEach(k => {
      const s = get(df, k, {});
      h.append('p').attr('class', 'meta').text(k.toUpperCase() + ': ' + get(s, 'file', '?') + ' \u2014 ' +
          get(s, 'program', '?') + ' (pid ' + get(s, 'pid', '?') + '), policy ' + get(s, 'policy', '?'));
    });
  });
  const s = section(app, 'summary', 'The run');
  const t = get(df, 'totals', {});
  const f = s.append('div').attr('class', 'figures');
  diffFigures.forEach(([k, label, fm]) => {
    figure(f, 'diff-' + k, label + ': A \u2192 B', int(t.change, k),
           fm(int(t.a, k)) + ' \u2192 ' + fm(int(t.b, k)) + ' (' + signed(int(t.change, k), fm) + ')');
  });
  s.append('p').attr('class', 'verdict').attr('id', 'verdict')
      .text(get(df, 'same', false) ? 'No change: every rule and site has the same traps, regions, bytes and time in traps in A and B.'
                                   : 'Rows by the largest change first (traps, then bytes, then regions).');
  const rules = get(df, 'rules', []) || [], sites = get(df, 'sites', []) || [];
  const c = section(app, 'changes', 'Change in traps');
  changeBars(c, rules.map(e => Object.assign({ label: 'rule ' + e.rule }, e))
      .concat(sites.map(e => Object.assign({ label: get(e, 'demangled', e.site) + ' (' + e.rule + ')' }, e)))
      .sort((x, y) => Math.abs(int(y.change, 'traps')) - Math.abs(int(x.change, 'traps'))),
      e => e.label, 'change-bars');
  sortedTable(section(app, 'rules', 'Rules'), 'rules-table', diffColumns('rule', 'rule'), rules, null);
  sortedTable(section(app, 'sites', 'Sites'), 'sites-table',
              diffColumns('site', 'site', [{ key: 'rule', label: 'rule', value: e => get(e, 'rule', '?') }]), sites, null);
  if (d.a && d.b) {
    const tl = section(app, 'timelines', 'Timelines, A and B');
    const yMax = sharedMax([d.a, d.b]), xMax = sharedSpan([d.a, d.b]);
    const row = tl.append('div').attr('class', 'side');
    [['a', d.a], ['b', d.b]].forEach(([k, r]) => {
      const col = row.append('div').attr('class', 'column');
      col.append('h3').text(k.toUpperCase() + ': ' + get(get(df, k, {}), 'file', '?'));
      timeline(col, r, { width: 510, height: 90, id: 'timeline-' + k, yMax, xMax });
    });
  }
}

// The largest count of each kind in any of the reports' timelines.
function sharedMax(reports) {
  const m = { traps: 0, grants: 0, live: 0 };
  reports.forEach(r => ((get(get(r, 'timeline', {}), 'rules', []) || []).forEach(e => {
    Object.keys(m).forEach(k => (e[k] || []).forEach(v => { m[k] = Math.max(m[k], v); }));
  })));
  return m;
}

// The longest of the reports' timelines, in ms.
function sharedSpan(reports) {
  return d3.max(reports, r => {
    const tl = get(r, 'timeline', {});
    return int(tl, 'intervals') * int(tl, 'interval_ns') / 1e6;
  }) || 0;
}

// ---- a comparison: page against regions ----

function comparePage(d) {
  const cmp = d.compare, runs = get(cmp, 'runs', []) || [], reports = d.runs || {};
  const rtlRuns = runs.map(r => r.name).filter(n => n !== 'none');
  app.append('header').call(h => {
    const command = get(cmp, 'command', []) || [];
    h.append('h1').text('rtlctl compare: ' + (command.length ? command[0].replace(/.*\//, '') : '?'));
    h.append('p').attr('class', 'command').text(command.join(' '));
    h.append('p').attr('class', 'meta').attr('id', 'identical')
        .text(get(cmp, 'identical', false) ? 'Outputs identical in every run (exit status, stdout, stderr, files).'
                                           : 'Outputs DIFFER: ' + get(cmp, 'difference', '?'));
  });
  const t = get(cmp, 'totals', {});
  const by = get(t, 'runs', {}), ratio = get(t, 'ratio_to_page', {});
  const s = section(app, 'summary', 'The runs side by side');
  const figs = [['traps', 'traps (stale included)', num], ['false_sharing_traps', 'false-sharing traps', num],
                ['prot_changes', 'protection changes', num], ['grants', 'grants', num],
                ['granted_bytes', 'bytes made accessible', bytes], ['touched_bytes', 'bytes of blocks that trapped', bytes],
                ['trap_ns', 'time in traps', ms], ['wall_ns', 'wall time', ms]];
  const cols = [{ key: 'label', label: '', value: e => e[1] }];
  rtlRuns.forEach(n => cols.push({ key: n, label: n, num: 1, value: e => int(by[n], e[0]), text: e => e[2](int(by[n], e[0])) }));
  rtlRuns.filter(n => n !== 'page').forEach(n => cols.push({
    key: n + '/page', label: n + '/page', num: 1,
    value: e => { const v = get(ratio[n] || {}, e[0], null); return v === null ? -1 : v; },
    text: e => { const v = get(ratio[n] || {}, e[0], null); return v === null ? '\u2013' : d3.format('.3~g')(v); } }));
  table(s, 'totals-table', cols, figs, null);
  // Each run's own timeline, the scales shared.
  const side = section(app, 'timelines', 'Timelines, page beside regions').append('div').attr('class', 'side');
  const shown = rtlRuns.map(n => reports[n]).filter(Boolean);
  const yMax = sharedMax(shown), xMax = sharedSpan(shown);
  const w = Math.floor(1040 / Math.max(1, rtlRuns.length)) - 10;
  rtlRuns.forEach(n => {
    const col = side.append('div').attr('class', 'column').attr('data-run', n);
    col.append('h3').text(n);
    if (reports[n]) {
      summary(col, reports[n], n + '-');
      timeline(col, reports[n], { width: w, height: 90, id: 'timeline-' + n, yMax, xMax });
    } else {
      col.append('p').attr('class', 'empty').text('No report from this run.');
    }
  });
  // Traps per site, one bar per run.
  const sites = (get(cmp, 'sites', []) || []).slice(0, 12);
  const sb = section(app, 'site-bars', 'Traps per site, each run');
  groupedBars(sb, sites, rtlRuns, 'site-bars-chart');
  const rowCols = (nameKey, label) => {
    const c = [{ key: nameKey, label, value: e => get(e, nameKey, '?') }];
    if (nameKey === 'site') c.push({ key: 'rule', label: 'rule', value: e => get(e, 'rule', '?') });
    rtlRuns.forEach(n => c.push({ key: n, label: 'traps ' + n, num: 1,
                                  value: e => int(get(e.runs, n, {}), 'traps'),
                                  text: e => num(int(get(e.runs, n, {}), 'traps')) }));
    rtlRuns.filter(n => n !== 'page').forEach(n => c.push({
      key: n + '/page', label: n + '/page', num: 1,
      value: e => { const v = get(get(e.ratio_to_page, n, {}), 'traps', null); return v === null ? -1 : v; },
      text: e => { const v = get(get(e.ratio_to_page, n, {}), 'traps', null); return v === null ? '\u2013' : d3.format('.3~g')(v); } }));
    return c;
  };
  sortedTable(section(app, 'rules', 'Rules'), 'rules-table', rowCols('name', 'rule'), get(cmp, 'rules', []) || [], null);
  sortedTable(section(app, 'sites', 'Sites'), 'sites-table', rowCols('site', 'site'), get(cmp, 'sites', []) || [], null);
}

function groupedBars(parent, rows, runNames, id) {
  const div = parent.append('div').attr('class', 'bars').attr('id', id);
  if (!rows.length) {
    div.append('p').attr('class', 'empty').text('No site trapped.');
    return;
  }
  const w = 1040, left = 420, band = 14 * runNames.length + 8, inner = w - left - 60;
  const most = d3.max(rows, e => d3.max(runNames, n => int(get(e.runs, n, {}), 'traps'))) || 1;
  const x = d3.scaleLinear().domain([0, most]).range([0, inner]);
  const color = d3.scaleOrdinal(d3.schemeTableau10).domain(runNames);
  const svg = div.append('svg').attr('width', w).attr('height', rows.length * band + 40);
  const g = svg.append('g').attr('transform', `translate(${left},4)`);
  const row = g.selectAll('g.site').data(rows).join('g').attr('class', 'site')
      .attr('transform', (e, i) => `translate(0,${i * band})`);
  row.append('text').attr('x', -8).attr('y', band / 2 + 4).attr('text-anchor', 'end')
      .text(e => { const s = get(e, 'site', '?') + ' (' + get(e, 'rule', '?') + ')'; return s.length > 64 ? s.slice(0, 63) + '\u2026' : s; });
  row.selectAll('rect').data(e => runNames.map(n => ({ n, v: int(get(e.runs, n, {}), 'traps') }))).join('rect')
      .attr('y', (b, i) => 4 + i * 14).attr('height', 12).attr('x', 0)
      .attr('width', b => x(b.v)).attr('fill', b => color(b.n))
      .attr('data-run', b => b.n).attr('data-value', b => b.v)
      .append('title').text(b => b.n + ': ' + num(b.v) + ' traps');
  g.append('g').attr('transform', `translate(0,${rows.length * band})`)
      .call(d3.axisBottom(x).ticks(6).tickFormat(d3.format('~s')));
  const legend = div.append('div').attr('class', 'legend');
  legend.selectAll('span').data(runNames).join('span').each(function (n) {
    const s = d3.select(this);
    s.append('i').style('background', color(n));
    s.append('b').text(n);
  });
}

try {
  ({ report: reportPage, diff: diffPage, compare: comparePage })[DATA.kind](DATA);
  document.body.dataset.rendered = 'ok';
} catch (e) {
  document.body.dataset.rendered = 'error: ' + e;
  app.append('pre').attr('class', 'error').text(String(e && e.stack || e));
}
