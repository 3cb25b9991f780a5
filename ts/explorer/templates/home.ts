export const home = `<% layout('@layout') %>
<h1>Overview</h1>
<section class="stats">
<% for (const s of it.stats) { %><div class="stat"><div class="label"><%= s.label %></div><div class="value"><% if (s.href) { %><a href="<%= s.href %>"><%= s.value %></a><% } else { %><%= s.value %><% } %></div></div>
<% } %></section>
<section class="charts">
<%~ include('@barChart', it.blocksChart) %>
<%~ include('@barChart', it.txsChart) %>
<% if (!it.chartsComplete) { %><p class="muted">Older days are still being indexed; they fill in as the node reads its history.</p><% } %>
</section>
<section class="two">
<div>
<h2>Latest blocks <a class="more" href="<%= it.site.links.blocks %>">all blocks</a></h2>
<%~ include('@blocksTable', { blocks: it.blocks }) %>
</div>
<div>
<h2>Latest transactions <a class="more" href="<%= it.site.links.transactions %>">all transactions</a></h2>
<%~ include('@txsTable', { txs: it.txs, showBlock: true }) %>
</div>
</section>
`;
