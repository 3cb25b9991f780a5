export const transactions = `<% layout('@layout') %>
<h1>Transactions</h1>
<p class="muted">Confirmed transactions, newest first, from block <a href="<%= it.scannedFromHref %>"><%= it.scannedFrom %></a> to the head. Older ones: open their block or address.</p>
<%~ include('@txsTable', { txs: it.txs, showBlock: true }) %>
<%~ include('@pager', it.pager) %>
`;

export const mempool = `<% layout('@layout') %>
<h1>Mempool</h1>
<p class="muted"><%= it.size %> transactions waiting for a block, oldest first.</p>
<table class="list">
<thead><tr><th>Transaction</th><th>Signed</th><th>Kind</th><th>From</th><th class="num">Nonce</th><th>To</th><th class="num">Value</th><th class="num">Fee</th></tr></thead>
<tbody>
<% for (const t of it.txs) { %><tr>
  <td><a class="mono" href="<%= t.href %>" title="<%= t.txid %>"><%= t.txidShort %></a></td>
  <td><%~ include('@time', t.signed) %></td>
  <td><span class="kind"><%= t.kind %></span></td>
  <td><%~ include('@addr', t.from) %></td>
  <td class="num"><%= t.nonce %></td>
  <td><%~ include('@addr', t.to) %></td>
  <td class="num"><%= t.value %></td>
  <td class="num"><%= t.fee %></td>
</tr>
<% } %><% if (it.txs.length === 0) { %><tr><td colspan="8" class="empty">The mempool is empty.</td></tr><% } %>
</tbody>
</table>
<%~ include('@pager', it.pager) %>
`;

export const tx = `<% layout('@layout') %>
<h1>Transaction</h1>
<p class="mono wrap"><%= it.txid %></p>
<dl class="fields">
<dt>Status</dt><dd><span class="badge <%= it.status === 'failed' ? 'bad' : it.status === 'pending' ? 'warn' : 'good' %>"><%= it.status %></span> <%= it.finality %></dd>
<% if (it.failureReason) { %><dt>Failure</dt><dd class="error wrap"><%= it.failureReason %></dd>
<% } %>
<dt>Kind</dt><dd><%= it.kind %></dd>
<% if (it.block) { %><dt>Block</dt><dd><a href="<%= it.block.href %>"><%= it.block.height %></a>, position <%= it.block.index %></dd>
<dt>Time</dt><dd><%~ include('@time', it.time) %> (<%= it.time.abs %>)</dd>
<% } %><dt>From</dt><dd><%~ include('@addr', it.row.from) %> <span class="mono muted"><%= it.row.from.value %></span></dd>
<dt>To</dt><dd><%~ include('@addr', it.row.to) %><% if (it.row.to.href) { %> <span class="mono muted"><%= it.row.to.value %></span><% } %></dd>
<dt>Value</dt><dd><%= it.value %></dd>
<dt>Fee</dt><dd><%= it.fee %></dd>
<% if (it.toProposer !== null) { %><dt>Fee split</dt><dd><%= it.toProposer %> to the proposer<% if (it.proposer) { %> (<%~ include('@addr', it.proposer) %>)<% } %>, <%= it.burned %> burned</dd>
<% } %><dt>Nonce</dt><dd><%= it.nonce %></dd>
<dt>Signed at</dt><dd><%~ include('@time', it.signedAt) %> (<%= it.signedAt.abs %>)</dd>
<dt>Chain id</dt><dd><%= it.chainId %></dd>
</dl>
<% if (it.op) { %><h2>Operation: <%= it.op.name %> <span class="badge"><%= it.op.family %></span></h2>
<dl class="fields">
<% if (it.op.created) { %><dt><%= it.op.created.k %></dt><dd><%~ include('@addr', it.op.created.link) %> <span class="mono muted"><%= it.op.created.link.value %></span></dd>
<% } %><% for (const f of it.op.fields) { %><dt><%= f.k %></dt><dd><% if (f.link) { %><%~ include('@addr', f.link) %> <span class="mono muted"><%= f.v %></span><% } else { %><span class="wrap"><%= f.v %></span><% } %></dd>
<% } %></dl>
<% } %><% if (it.tokenMoves.length > 0) { %><h2>Tokens moved</h2>
<table class="list"><thead><tr><th>Kind</th><th>Token</th><th>From</th><th>To</th><th class="num">Amount</th></tr></thead><tbody>
<% for (const m of it.tokenMoves) { %><tr><td><%= m.kind %></td><td><%~ include('@addr', m.token) %></td><td><%~ include('@addr', m.from) %></td><td><%~ include('@addr', m.to) %></td><td class="num"><%= m.amount %></td></tr>
<% } %></tbody></table>
<% } %><% if (it.events.length > 0) { %><h2>Events</h2>
<% for (const e of it.events) { %><div class="log"><strong><%= e.type %></strong>
<dl class="fields"><% for (const f of e.fields) { %><dt><%= f.k %></dt><dd><% if (f.link) { %><%~ include('@addr', f.link) %> <span class="mono muted"><%= f.v %></span><% } else { %><span class="wrap"><%= f.v %></span><% } %></dd>
<% } %></dl></div>
<% } %><% } %><% if (it.evm) { %><h2>EVM execution</h2>
<dl class="fields">
<dt>Gas limit</dt><dd><%= it.evm.gasLimit %></dd>
<dt>Gas used</dt><dd><%= it.evm.gasUsed %></dd>
<dt>Gas price</dt><dd><%= it.evm.price %></dd>
<% if (it.evm.created) { %><dt>Contract created</dt><dd><%~ include('@addr', it.evm.created) %> <span class="mono muted"><%= it.evm.created.value %></span></dd><% } %>
<% if (it.call && it.call.decoded) { %><dt>Function</dt><dd><span class="mono"><%= it.call.decoded.signature %></span> <span class="badge good">verified<% if (it.call.contract) { %>: <%= it.call.contract %><% } %></span>
<ul><% for (const a of it.call.decoded.args) { %><li><%= a.name %> (<%= a.type %>): <span class="mono wrap"><%= a.value %></span></li><% } %></ul></dd>
<% } %><dt>Input</dt><dd><% if (it.evm.input === '0x') { %>none<% } else { %><details><summary><%= (it.evm.input.length - 2) / 2 %> bytes</summary><code class="wrap"><%= it.evm.input %></code></details><% } %></dd>
</dl>
<h3>Call tree</h3>
<% if (it.calls) { %><table class="list calls">
<thead><tr><th>Call</th><th>From</th><th>To</th><th class="num">Value</th><th class="num">Gas used</th><th>Input</th></tr></thead>
<tbody>
<% for (const c of it.calls.rows) { %><tr>
  <td><span class="depth d<%= c.depth %>"><%= c.type %></span><% if (c.error) { %> <span class="badge bad"><%= c.error %></span><% } %></td>
  <td><%~ include('@addr', c.from) %></td>
  <td><%~ include('@addr', c.to) %></td>
  <td class="num"><%= c.value %></td>
  <td class="num"><%= c.gasUsed %></td>
  <td class="mono"><% if (c.fn) { %><%= c.fn %><% } else { %><%= c.input %><% } %></td>
</tr>
<% } %></tbody>
</table>
<% if (it.calls.cut) { %><p class="muted">The tree is longer; the first calls are shown.</p><% } %>
<% } else if (it.tracePending) { %><p class="muted">The call tree is being traced; this page reloads in a moment.</p>
<% } else if (it.traceUnavailable) { %><p class="muted">No call tree: <%= it.traceUnavailable %></p>
<% } else { %><p class="muted">The call tree is shown once the transaction is in a block.</p><% } %>
<% } %><% if (it.logs.length > 0) { %><h2>Logs</h2>
<% for (const l of it.logs) { %><div class="log">
<div><strong>#<%= l.index %></strong> from <%~ include('@addr', l.address) %><% if (!l.verified) { %> <span class="muted">(contract not verified: raw values)</span><% } %></div>
<% if (l.decoded) { %><div class="mono"><%= l.decoded.signature %></div>
<ul><% for (const a of l.decoded.args) { %><li><%= a.name %> (<%= a.type %>): <span class="mono wrap"><%= a.value %></span></li><% } %></ul>
<% } %><ol class="topics"><% for (const t of l.topics) { %><li class="mono wrap"><%= t %></li><% } %></ol>
<div>data: <code class="wrap"><%= l.data %></code></div>
</div>
<% } %><% } %><details><summary>Signature and public key</summary>
<dl class="fields"><dt>Signature</dt><dd class="mono wrap"><%= it.signature %></dd><dt>Public key</dt><dd class="mono wrap"><%= it.publicKey || '(EVM: recovered from the signature)' %></dd></dl>
</details>
`;
