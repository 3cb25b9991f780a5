/** Pieces several pages share: tables of blocks and transactions, the pager, charts, times and amounts. */

/** <time> with the relative time shown and the absolute one on hover. */
export const timeTag = `<time datetime="<%= it.iso %>" title="<%= it.abs %>"><%= it.rel %></time>`;

/** An address (or contract) link showing a short form; the full value is the title. */
export const addr = `<% if (it.href) { %><a class="mono" href="<%= it.href %>" title="<%= it.value %>"><%= it.label %></a><% } else { %><span class="mono" title="<%= it.value %>"><%= it.label %></span><% } %>`;

export const blocksTable = `<table class="list">
<thead><tr><th>Height</th><th>Age</th><th>Proposer</th><th class="num">Txs</th><th class="num">Gas used</th><th>Hash</th></tr></thead>
<tbody>
<% for (const b of it.blocks) { %>
<tr>
  <td><a href="<%= b.href %>"><%= b.heightText %></a></td>
  <td><%~ include('@time', b.time) %></td>
  <td><%~ include('@addr', b.proposer) %></td>
  <td class="num"><%= b.txCount %></td>
  <td class="num"><%= b.gasUsed %></td>
  <td><a class="mono" href="<%= b.href %>" title="<%= b.hash %>"><%= b.hashShort %></a></td>
</tr>
<% } %>
<% if (it.blocks.length === 0) { %><tr><td colspan="6" class="empty">No blocks.</td></tr><% } %>
</tbody>
</table>
`;

export const txsTable = `<table class="list">
<thead><tr><th>Transaction</th><% if (it.showBlock) { %><th>Block</th><th>Age</th><% } %><th>Kind</th><th>From</th><th>To</th><th class="num">Value</th><th class="num">Fee</th></tr></thead>
<tbody>
<% for (const t of it.txs) { %>
<tr>
  <td><a class="mono" href="<%= t.href %>" title="<%= t.txid %>"><%= t.txidShort %></a><% if (t.failed) { %> <span class="badge bad">failed</span><% } %></td>
<% if (it.showBlock) { %>  <td><% if (t.blockHref) { %><a href="<%= t.blockHref %>"><%= t.height %></a><% } else { %><span class="muted">pending</span><% } %></td>
  <td><% if (t.time) { %><%~ include('@time', t.time) %><% } %></td>
<% } %>  <td><span class="kind"><%= t.kind %></span><% if (t.direction) { %> <span class="badge"><%= t.direction %></span><% } %></td>
  <td><%~ include('@addr', t.from) %></td>
  <td><%~ include('@addr', t.to) %></td>
  <td class="num"><%= t.value %></td>
  <td class="num"><%= t.fee %></td>
</tr>
<% } %>
<% if (it.txs.length === 0) { %><tr><td colspan="<%= it.showBlock ? 8 : 6 %>" class="empty"><%= it.emptyText ?? 'No transactions.' %></td></tr><% } %>
</tbody>
</table>
`;

/** Previous / next links and the page number; it = Pager. */
export const pager = `<nav class="pager" aria-label="Pages">
<% if (it.prev) { %><a rel="prev" href="<%= it.prev %>">← Newer</a><% } else { %><span class="muted">← Newer</span><% } %>
<span>Page <%= it.page %><% if (it.pages) { %> of <%= it.pages %><% } %></span>
<% if (it.next) { %><a rel="next" href="<%= it.next %>">Older →</a><% } else { %><span class="muted">Older →</span><% } %>
</nav>
`;

/** Vertical bar chart as inline SVG; it = BarChart. */
export const barChart = `<figure class="chart">
<svg viewBox="0 0 <%= it.width %> <%= it.height %>" width="100%" role="img" aria-label="<%= it.caption %>">
<line x1="<%= it.max.x + 4 %>" y1="<%= it.baseline %>" x2="<%= it.width %>" y2="<%= it.baseline %>" stroke="#9aa4b2" stroke-width="1"/>
<text x="<%= it.max.x %>" y="<%= it.max.y %>" text-anchor="end" font-size="11" fill="#5b6472"><%= it.max.text %></text>
<text x="<%= it.max.x %>" y="<%= it.baseline %>" text-anchor="end" font-size="11" fill="#5b6472">0</text>
<% for (const b of it.bars) { %><rect x="<%= b.x %>" y="<%= b.y %>" width="<%= b.w %>" height="<%= b.h %>" fill="#2f6fdf"><title><%= b.title %></title></rect>
<% } %><% for (const l of it.labels) { %><text x="<%= l.x %>" y="<%= l.y %>" text-anchor="middle" font-size="11" fill="#5b6472"><%= l.text %></text>
<% } %><% if (it.empty) { %><text x="<%= it.width / 2 %>" y="<%= it.height / 2 %>" text-anchor="middle" font-size="13" fill="#5b6472">no data yet</text><% } %>
</svg>
<figcaption><%= it.caption %></figcaption>
</figure>
`;

/** One bar split by share, with a legend; it = ShareChart. */
export const shareChart = `<figure class="chart">
<svg viewBox="0 0 <%= it.width %> <%= it.height %>" width="100%" role="img" aria-label="<%= it.caption %>">
<% for (const s of it.segments) { %><rect x="<%= s.x %>" y="0" width="<%= s.w %>" height="<%= it.height %>" fill="<%= s.fill %>"><title><%= s.title %></title></rect>
<% } %><% if (it.empty) { %><rect x="0" y="0" width="<%= it.width %>" height="<%= it.height %>" fill="#eef1f5"/><% } %>
</svg>
<figcaption><%= it.caption %></figcaption>
<% if (!it.empty) { %><ul class="legend">
<% for (const s of it.segments) { %><li><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="<%= s.fill %>"/></svg> <span class="mono"><%= s.label %></span> <%= s.share %></li>
<% } %></ul><% } %>
</figure>
`;
