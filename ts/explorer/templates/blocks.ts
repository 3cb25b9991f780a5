export const blocks = `<% layout('@layout') %>
<h1>Blocks</h1>
<p class="muted"><%= it.total %> blocks, newest first.</p>
<%~ include('@blocksTable', { blocks: it.blocks }) %>
<%~ include('@pager', it.pager) %>
`;

export const block = `<% layout('@layout') %>
<h1><%= it.heading %></h1>
<nav class="pager" aria-label="Neighbour blocks">
<% if (it.prev) { %><a rel="prev" href="<%= it.prev %>">← Parent</a><% } else { %><span class="muted">← Parent</span><% } %>
<% if (it.next) { %><a rel="next" href="<%= it.next %>">Child →</a><% } else { %><span class="muted">Child →</span><% } %>
</nav>
<dl class="fields">
<% for (const f of it.fields) { %><dt><%= f.k %></dt><dd<% if (f.mono) { %> class="mono"<% } %>><% if (f.href) { %><a href="<%= f.href %>"><%= f.v %></a><% } else { %><%= f.v %><% } %></dd>
<% } %><dt>Proposer</dt><dd><% if (it.proposer) { %><%~ include('@addr', it.proposer) %> <span class="mono muted"><%= it.proposer.value %></span><% } else { %>genesis (no proposer)<% } %></dd>
<dt>Justification</dt><dd><% if (!it.justification) { %>none (<%= it.blockConsensus === 'PoA' ? 'PoA blocks are final when committed' : 'no commit certificate' %>)<% } else if (it.justification.malformed) { %><span class="badge bad">malformed</span> <%= it.justificationBytes %> bytes<% } else { %>commit certificate of round <%= it.justification.round %>, <%= it.justification.signers.length %> precommits:
<ul class="inline"><% for (const s of it.justification.signers) { %><li><%~ include('@addr', s) %></li><% } %></ul><% } %></dd>
<dt>Logs bloom</dt><dd><% if (it.bloomEmpty) { %>empty (no EVM logs)<% } else { %><details><summary>show 2048-bit bloom</summary><code class="wrap"><%= it.bloom %></code></details><% } %></dd>
</dl>
<h2>Transactions</h2>
<%~ include('@txsTable', { txs: it.txs, showBlock: false, emptyText: 'This block has no transactions.' }) %>
<% if (it.pager.pages !== '1') { %><%~ include('@pager', it.pager) %><% } %>
`;
