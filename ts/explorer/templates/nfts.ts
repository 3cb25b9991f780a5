/** SRC-721 pages. URIs are printed as text only (escaped like every value), never put in an attribute. */

/** Fields of an entity, a value linked when it names a page. */
const fieldList = `<dl class="fields">
<% for (const f of it.fields) { %><dt><%= f.k %></dt><dd><% if (f.link) { %><%~ include('@addr', f.link) %><% if (f.link.label !== f.v) { %> <span class="mono muted"><%= f.v %></span><% } %><% } else { %><span class="wrap"><%= f.v %></span><% } %></dd>
<% } %></dl>`;

/** An NFT event feed; it = { events, showCollection }. */
export const nftEvents = `<table class="list"><thead><tr><th>Event</th><% if (it.showCollection) { %><th>Collection</th><% } %><th>Transaction</th><th>Block</th><th>Details</th></tr></thead><tbody>
<% for (const e of it.events) { %><tr><td><%= e.type %></td><% if (it.showCollection) { %><td><%~ include('@addr', e.collection) %></td><% } %><td><a class="mono" href="<%= e.tx.href %>" title="<%= e.tx.txid %>"><%= e.tx.text %></a></td><td><a href="<%= e.block.href %>"><%= e.block.text %></a></td><td><ul class="inline"><% for (const f of e.fields) { %><li><%= f.k %>: <% if (f.link) { %><%~ include('@addr', f.link) %><% } else { %><span class="wrap"><%= f.v %></span><% } %></li><% } %></ul></td></tr>
<% } %><% if (it.events.length === 0) { %><tr><td colspan="<%= it.showCollection ? 5 : 4 %>" class="empty">No events.</td></tr><% } %></tbody></table>
`;

export const nftCollections = `<% layout('@layout') %>
<h1>NFT collections</h1>
<p class="muted"><%= it.total %> SRC-721 collections, oldest first.</p>
<table class="list">
<thead><tr><th>Collection</th><th>Symbol</th><th>Address</th><th class="num">Tokens</th><th class="num">Holders</th><th>Created</th></tr></thead>
<tbody>
<% for (const c of it.rows) { %><tr>
  <td><a href="<%= c.href %>"><%= c.name %></a></td>
  <td><%= c.symbol %></td>
  <td><a class="mono" href="<%= c.href %>" title="<%= c.address %>"><%= c.addressShort %></a></td>
  <td class="num"><%= c.supply %></td>
  <td class="num"><%= c.holders %></td>
  <td><a href="<%= c.created.href %>"><%= c.created.text %></a></td>
</tr>
<% } %><% if (it.rows.length === 0) { %><tr><td colspan="6" class="empty">No collections deployed yet.</td></tr><% } %>
</tbody>
</table>
<%~ include('@pager', it.pager) %>
`;

export const nftCollection = `<% layout('@layout') %>
<h1><%= it.title %></h1>
${fieldList}
<%~ include('@shareChart', it.chart) %>
<nav class="tabs" aria-label="Collection lists"><a href="<%= it.tabLinks.tokens %>"<% if (it.tab === 'tokens') { %> aria-current="page"<% } %>>Tokens (<%= it.totals.tokens %>)</a> <a href="<%= it.tabLinks.holders %>"<% if (it.tab === 'holders') { %> aria-current="page"<% } %>>Holders (<%= it.totals.holders %>)</a> <a href="<%= it.tabLinks.events %>"<% if (it.tab === 'events') { %> aria-current="page"<% } %>>Events (<%= it.totals.events %>)</a></nav>
<% if (it.tab === '' || it.tab === 'tokens') { %><h2>Tokens</h2>
<table class="list"><thead><tr><th>Token</th><th>Owner</th><th>URI</th><th>Minted</th></tr></thead><tbody>
<% for (const t of it.tokens) { %><tr><td><a href="<%= t.href %>"><%= t.id %></a></td><td><%~ include('@addr', t.owner) %></td><td class="wrap"><%= t.uri %></td><td><a href="<%= t.minted.href %>"><%= t.minted.text %></a></td></tr>
<% } %><% if (it.tokens.length === 0) { %><tr><td colspan="4" class="empty">No tokens.</td></tr><% } %></tbody></table>
<% } %><% if (it.tab === '' || it.tab === 'holders') { %><h2>Holders</h2>
<table class="list"><thead><tr><th class="num">Rank</th><th>Holder</th><th class="num">Tokens</th><th class="num">Share</th></tr></thead><tbody>
<% for (const h of it.holders) { %><tr><td class="num"><%= h.rank %></td><td><%~ include('@addr', h.who) %></td><td class="num"><%= h.count %></td><td class="num"><%= h.share %></td></tr>
<% } %><% if (it.holders.length === 0) { %><tr><td colspan="4" class="empty">No holders.</td></tr><% } %></tbody></table>
<% } %><% if (it.tab === '' || it.tab === 'events') { %><h2>Events</h2>
<%~ include('@nftEvents', { events: it.events, showCollection: false }) %>
<% } %><% if (it.tabPager) { %><%~ include('@pager', it.tabPager) %><% } %>
`;

export const nftToken = `<% layout('@layout') %>
<h1><a href="<%= it.collection.href %>"><%= it.collection.name %></a> #<%= it.id %></h1>
<p class="muted">Token <%= it.id %> of the SRC-721 collection <a class="mono" href="<%= it.collection.href %>"><%= it.collection.address %></a> (<%= it.collection.symbol %>).</p>
<% if (it.burned) { %><p><span class="badge bad">burned</span> This token no longer exists; its history remains.</p>
<% } else { %>${fieldList}
<% } %><h2>History (<%= it.total %> events)</h2>
<%~ include('@nftEvents', { events: it.events, showCollection: false }) %>
<%~ include('@pager', it.pager) %>
`;
