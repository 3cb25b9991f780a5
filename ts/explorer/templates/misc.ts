export const richlist = `<% layout('@layout') %>
<h1>Rich list</h1>
<p class="muted"><%= it.accounts %> accounts; circulating supply <%= it.circulating %>. The largest <%= it.max %> balances are listed.</p>
<table class="list"><thead><tr><th class="num">Rank</th><th>Address</th><th class="num">Balance</th><th class="num">Share of supply</th></tr></thead><tbody>
<% for (const r of it.rows) { %><tr><td class="num"><%= r.rank %></td><td><%~ include('@addr', r.who) %></td><td class="num"><%= r.balance %></td><td class="num"><%= r.share %></td></tr>
<% } %><% if (it.rows.length === 0) { %><tr><td colspan="4" class="empty">No balances.</td></tr><% } %></tbody></table>
<%~ include('@pager', it.pager) %>
`;

export const searchNotFound = `<% layout('@layout') %>
<h1><%= it.empty ? 'Search' : 'Not found' %></h1>
<% if (it.empty) { %><p>Type a block height, a block hash, a transaction id, an address, a token contract or an NFT collection in the search box.</p>
<% } else { %><p class="error">Nothing on this chain matches <code><%= it.q %></code>.</p>
<p>The search knows block heights, block hashes and transaction ids (64 hex), addresses (0x + 40 hex), token contracts (SRC20_ + 40 hex), NFT collections (SRC721_ + 40 hex), and the exact names and symbols of tokens and collections.</p><% } %>
`;
