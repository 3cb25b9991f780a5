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
<% if (it.code) { %><h2>Contract</h2>
<% if (it.verified) { %><p>Verified source<% if (it.verified.name) { %> of <strong><%= it.verified.name %></strong><% } %><% if (it.verified.compiler) { %>, compiled with <%= it.verified.compiler %><% } %>.</p>
<% for (const f of it.verified.files) { %><details><summary class="mono"><%= f.path %></summary><pre class="source"><%= f.content %></pre></details>
<% } %><% } else { %><p class="muted">The source of this contract is not verified.</p><% } %>
<details><summary>Runtime bytecode (<%= it.code.bytes %> bytes)</summary><code class="wrap"><%= it.code.hex %></code></details>
<% } %><h2>Transactions</h2>
<%~ include('@txsTable', { txs: it.txs, showBlock: true }) %>
<%~ include('@pager', it.pager) %>
`;
