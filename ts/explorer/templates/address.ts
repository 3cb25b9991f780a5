export const address = `<% layout('@layout') %>
<h1><%= it.code ? 'Contract' : 'Address' %></h1>
<p class="mono wrap"><%= it.address %><% if (it.validator) { %> <a class="badge good" href="<%= it.validator.href %>">validator <%= it.validator.name %></a><% } %><% if (it.verified) { %> <span class="badge <%= it.verified.status === 'perfect' ? 'good' : 'warn' %>">verified: <%= it.verified.status %> match</span><% } else if (it.code) { %> <span class="badge">not verified</span><% } %></p>
<dl class="fields">
<% for (const f of it.fields) { %><dt><%= f.k %></dt><dd><%= f.v %></dd>
<% } %></dl>
<h2>Token holdings</h2>
<table class="list"><thead><tr><th>Token</th><th>Symbol</th><th>Standard</th><th class="num">Balance</th></tr></thead><tbody>
<% for (const t of it.tokens) { %><tr><td><%~ include('@addr', t.contract) %></td><td><%= t.symbol %></td><td><%= t.standard %></td><td class="num"><%= t.balance %></td></tr>
<% } %><% if (it.tokens.length === 0) { %><tr><td colspan="4" class="empty">No token holdings.</td></tr><% } %></tbody></table>
<h2>NFT holdings</h2>
<table class="list"><thead><tr><th>Collection</th><th class="num">Tokens held</th></tr></thead><tbody>
<% for (const h of it.nftHoldings) { %><tr><td><%~ include('@addr', h.collection) %></td><td class="num"><%= h.count %></td></tr>
<% } %><% if (it.nftHoldings.length === 0) { %><tr><td colspan="2" class="empty">No NFTs.</td></tr><% } %></tbody></table>
<% if (it.nftHoldingsMore) { %><p class="muted">More collections: see the NFTs tab.</p><% } %>
<% if (it.code) { %><h2>Contract</h2>
<% if (it.verified) { %><p>Verified source<% if (it.verified.name) { %> of <strong><%= it.verified.name %></strong><% } %><% if (it.verified.compiler) { %>, compiled with <%= it.verified.compiler %><% } %>.</p>
<% for (const f of it.verified.files) { %><details><summary class="mono"><%= f.path %></summary><pre class="source"><%= f.content %></pre></details>
<% } %><% } else { %><p class="muted">The source of this contract is not verified.</p><% } %>
<details><summary>Runtime bytecode (<%= it.code.bytes %> bytes)</summary><code class="wrap"><%= it.code.hex %></code></details>
<% } %><nav class="tabs" aria-label="Address lists"><a href="<%= it.tabLinks.transactions %>"<% if (it.tab === 'transactions') { %> aria-current="page"<% } %>>Transactions (<%= it.txTotal %>)</a> <a href="<%= it.tabLinks.transfers %>"<% if (it.tab === 'token-transfers') { %> aria-current="page"<% } %>>SRC-20 transfers (<%= it.transferTotal %>)</a> <a href="<%= it.tabLinks.nfts %>"<% if (it.tab === 'nfts') { %> aria-current="page"<% } %>>NFTs (<%= it.nftTotal %>)</a> <a href="<%= it.tabLinks.nftEvents %>"<% if (it.tab === 'nft-events') { %> aria-current="page"<% } %>>NFT events (<%= it.nftEventTotal %>)</a></nav>
<% if (it.tab === 'transactions') { %><h2>Transactions</h2>
<%~ include('@txsTable', { txs: it.txs, showBlock: true }) %>
<% } else if (it.tab === 'nfts') { %><h2>NFTs</h2>
<table class="list"><thead><tr><th>Collection</th><th>Token</th><th>URI</th></tr></thead><tbody>
<% for (const n of it.nfts) { %><tr><td><%~ include('@addr', n.collection) %></td><td><a href="<%= n.href %>"><%= n.id %></a></td><td class="wrap"><%= n.uri %></td></tr>
<% } %><% if (it.nfts.length === 0) { %><tr><td colspan="3" class="empty">No NFTs.</td></tr><% } %></tbody></table>
<% } else if (it.tab === 'nft-events') { %><h2>NFT events</h2>
<%~ include('@nftEvents', { events: it.nftEvents, showCollection: true }) %>
<% } else { %><h2>SRC-20 transfers</h2>
<table class="list"><thead><tr><th>Transaction</th><th>Block</th><th>Age</th><th>Kind</th><th>Token</th><th>From</th><th>To</th><th class="num">Amount</th></tr></thead><tbody>
<% for (const x of it.transfers) { %><tr><td><a class="mono" href="<%= x.href %>" title="<%= x.txid %>"><%= x.txShort %></a></td><td><a href="<%= x.block.href %>"><%= x.block.text %></a></td><td><%~ include('@time', x.time) %></td><td><%= x.kind %> <span class="badge"><%= x.direction %></span></td><td><%~ include('@addr', x.token) %></td><td><%~ include('@addr', x.from) %></td><td><%~ include('@addr', x.to) %></td><td class="num"><%= x.amount %></td></tr>
<% } %><% if (it.transfers.length === 0) { %><tr><td colspan="8" class="empty">No SRC-20 transfers.</td></tr><% } %></tbody></table>
<% } %><%~ include('@pager', it.pager) %>
`;
