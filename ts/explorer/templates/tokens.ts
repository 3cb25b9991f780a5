export const tokens = `<% layout('@layout') %>
<h1>Tokens</h1>
<p class="muted"><%= it.total %> SRC-20 tokens.</p>
<table class="list">
<thead><tr><th>Token</th><th>Symbol</th><th>Contract</th><th class="num">Supply</th><th class="num">Holders</th><th>Deployed</th></tr></thead>
<tbody>
<% for (const t of it.rows) { %><tr>
  <td><a href="<%= t.href %>"><%= t.name %></a></td>
  <td><%= t.symbol %></td>
  <td><a class="mono" href="<%= t.href %>" title="<%= t.contract %>"><%= t.contractShort %></a></td>
  <td class="num"><%= t.supply %></td>
  <td class="num"><%= t.holders %></td>
  <td><a href="<%= t.deployed.href %>"><%= t.deployed.text %></a></td>
</tr>
<% } %><% if (it.rows.length === 0) { %><tr><td colspan="6" class="empty">No tokens deployed yet.</td></tr><% } %>
</tbody>
</table>
<%~ include('@pager', it.pager) %>
`;

export const token = `<% layout('@layout') %>
<h1><%= it.title %></h1>
<dl class="fields">
<% for (const f of it.token) { %><dt><%= f.k %></dt><dd><% if (f.link) { %><%~ include('@addr', f.link) %><% if (f.link.label !== f.v) { %> <span class="mono muted"><%= f.v %></span><% } %><% } else { %><span class="wrap"><%= f.v %></span><% } %></dd>
<% } %></dl>
<%~ include('@shareChart', it.chart) %>
<nav class="tabs" aria-label="Token lists"><a href="<%= it.tabLinks.holders %>"<% if (it.tab === 'holders') { %> aria-current="page"<% } %>>Holders (<%= it.holdersTotal %>)</a> <a href="<%= it.tabLinks.transfers %>"<% if (it.tab === 'transfers') { %> aria-current="page"<% } %>>Transfers (<%= it.transfersTotal %>)</a></nav>
<% if (it.tab !== 'transfers') { %><h2>Holders</h2>
<table class="list"><thead><tr><th class="num">Rank</th><th>Holder</th><th class="num">Balance</th><th class="num">Share</th></tr></thead><tbody>
<% for (const h of it.holders) { %><tr><td class="num"><%= h.rank %></td><td><%~ include('@addr', h.who) %></td><td class="num"><%= h.balance %></td><td class="num"><%= h.share %></td></tr>
<% } %><% if (it.holders.length === 0) { %><tr><td colspan="4" class="empty">No holders.</td></tr><% } %></tbody></table>
<% } %><% if (it.tab !== 'holders') { %><h2>Transfers</h2>
<table class="list"><thead><tr><th>Transaction</th><th>Block</th><th>Age</th><th>Kind</th><th>From</th><th>To</th><th class="num">Amount</th></tr></thead><tbody>
<% for (const x of it.transfers) { %><tr><td><a class="mono" href="<%= x.href %>" title="<%= x.txid %>"><%= x.txShort %></a></td><td><a href="<%= x.block.href %>"><%= x.block.text %></a></td><td><%~ include('@time', x.time) %></td><td><%= x.kind %></td><td><%~ include('@addr', x.from) %></td><td><%~ include('@addr', x.to) %></td><td class="num"><%= x.amount %></td></tr>
<% } %><% if (it.transfers.length === 0) { %><tr><td colspan="7" class="empty">No transfers.</td></tr><% } %></tbody></table>
<% } %><% if (it.tabPager) { %><%~ include('@pager', it.tabPager) %><% } %>
`;
