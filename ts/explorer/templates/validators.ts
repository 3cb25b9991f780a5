export const validators = `<% layout('@layout') %>
<h1>Validators</h1>
<p class="muted">Consensus <%= it.consensus %>, epoch <%= it.epoch %>, total stake <%= it.totalStake %>.</p>
<table class="list">
<thead><tr><th>Name</th><th>Address</th><th>Status</th><th class="num">Stake</th><th class="num">Commission</th><th class="num">Uptime</th><th class="num">Blocks this epoch</th><th class="num">Blocks</th><th>Last block</th></tr></thead>
<tbody>
<% for (const v of it.rows) { %><tr>
  <td><a href="<%= v.href %>"><%= v.name %></a></td>
  <td><%~ include('@addr', v.address) %></td>
  <td><span class="badge <%= v.status === 'active' ? 'good' : 'bad' %>"><%= v.status %></span></td>
  <td class="num"><%= v.stake %></td>
  <td class="num"><%= v.commission %></td>
  <td class="num"><%= v.uptime %></td>
  <td class="num"><%= v.epochBlocks %></td>
  <td class="num"><%= v.blocks %></td>
  <td><% if (v.last) { %><a href="<%= v.last.href %>"><%= v.last.text %></a><% } else { %><span class="muted">none yet</span><% } %></td>
</tr>
<% } %></tbody>
</table>
<% if (it.partial) { %><p class="muted">Block counts are still being indexed from the chain's history.</p><% } %>
`;

export const validator = `<% layout('@layout') %>
<h1>Validator <%= it.name %></h1>
<p><%~ include('@addr', it.address) %> <span class="mono muted"><%= it.address.value %></span></p>
<dl class="fields">
<% for (const f of it.fields) { %><dt><%= f.k %></dt><dd><%= f.v %></dd>
<% } %><dt>Public key</dt><dd class="mono wrap"><%= it.publicKey %></dd>
</dl>
<%~ include('@barChart', it.chart) %>
<section class="two">
<div>
<h2>Rewards by epoch</h2>
<table class="list"><thead><tr><th>Epoch</th><th class="num">Blocks</th><th class="num">Rewards</th></tr></thead><tbody>
<% for (const r of it.rewardRows) { %><tr><td><%= r.epoch %></td><td class="num"><%= r.blocks %></td><td class="num"><%= r.rewards %></td></tr>
<% } %></tbody></table>
</div>
<div>
<h2>Delegators (<%= it.delegatorTotal %>, <%= it.delegated %>)</h2>
<table class="list"><thead><tr><th>Delegator</th><th class="num">Amount</th></tr></thead><tbody>
<% for (const d of it.delegators) { %><tr><td><%~ include('@addr', d.who) %></td><td class="num"><%= d.amount %></td></tr>
<% } %><% if (it.delegators.length === 0) { %><tr><td colspan="2" class="empty">No delegations.</td></tr><% } %></tbody></table>
</div>
</section>
<h2>Latest blocks proposed</h2>
<%~ include('@blocksTable', { blocks: it.blocks }) %>
`;
