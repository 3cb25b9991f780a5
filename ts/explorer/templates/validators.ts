export const validators = `<% layout('@layout') %>
<h1>Validators</h1>
<p class="muted">Consensus <%= it.consensus %>, epoch <%= it.epoch %>; <%= it.active %> active validators bonding <%= it.totalStake %>. Registered validators outside the active set are listed after it.</p>
<table class="list">
<thead><tr><th class="num">#</th><th>Name</th><th>Status</th><th class="num">Stake</th><th class="num">Voting power</th><th class="num">Self-stake</th><th class="num">Delegators</th><th class="num">Commission</th><th class="num">Uptime</th><th class="num">Blocks this epoch</th><th class="num">Blocks</th><th>Last block</th></tr></thead>
<tbody>
<% for (const v of it.rows) { %><tr>
  <td class="num"><%= v.rank %></td>
  <td><a href="<%= v.href %>"><%= v.name %></a><br><%~ include('@addr', v.address) %></td>
  <td><span class="badge <%= v.status === 'active' ? 'good' : v.status === 'unbonding' ? 'warn' : 'bad' %>"><%= v.status %></span></td>
  <td class="num"><%= v.stake %></td>
  <td class="num"><%= v.power %></td>
  <td class="num"><%= v.selfStake %></td>
  <td class="num"><%= v.delegators %></td>
  <td class="num"><%= v.commission %></td>
  <td class="num"><%= v.uptime %></td>
  <td class="num"><%= v.epochBlocks %></td>
  <td class="num"><%= v.blocks %></td>
  <td><% if (v.last) { %><a href="<%= v.last.href %>"><%= v.last.text %></a><% } else { %><span class="muted">none yet</span><% } %></td>
</tr>
<% } %><% if (it.rows.length === 0) { %><tr><td colspan="12" class="empty">No validators.</td></tr><% } %></tbody>
</table>
<% if (it.partial) { %><p class="muted">Block counts are still being indexed from the chain's history.</p><% } %>
`;

export const validator = `<% layout('@layout') %>
<h1>Validator <%= it.name %> <span class="badge <%= it.status === 'active' ? 'good' : it.status === 'unbonding' ? 'warn' : 'bad' %>"><%= it.status %></span></h1>
<p><%~ include('@addr', it.address) %> <span class="mono muted"><%= it.address.value %></span></p>
<dl class="fields">
<% for (const f of it.fields) { %><dt><%= f.k %></dt><dd><%= f.v %></dd>
<% } %><dt>Public key</dt><dd class="mono wrap"><%= it.publicKey %></dd>
</dl>
<%~ include('@barChart', it.chart) %>
<h2>Rewards by epoch</h2>
<table class="list"><thead><tr><th>Epoch</th><th class="num">Blocks</th><th class="num">Proposer rewards</th><th class="num">Commission</th><th class="num">Delegators' rewards</th></tr></thead><tbody>
<% for (const r of it.rewardRows) { %><tr><td><%= r.epoch %></td><td class="num"><%= r.blocks %></td><td class="num"><%= r.proposer %></td><td class="num"><%= r.commission %></td><td class="num"><%= r.delegators %></td></tr>
<% } %><% if (it.rewardRows.length === 0) { %><tr><td colspan="5" class="empty">No epochs yet.</td></tr><% } %></tbody></table>
<h2>Delegators (<%= it.delegatorTotal %>, <%= it.delegated %> bonded)</h2>
<table class="list"><thead><tr><th>Delegator</th><th class="num">Amount</th><th class="num">Share of stake</th><th class="num">Since epoch</th><th class="num">Pending reward</th></tr></thead><tbody>
<% for (const d of it.delegators) { %><tr><td><%~ include('@addr', d.who) %><% if (d.self) { %> <span class="badge">self</span><% } %></td><td class="num"><%= d.amount %></td><td class="num"><%= d.share %></td><td class="num"><%= d.since %></td><td class="num"><%= d.pending %></td></tr>
<% } %><% if (it.delegators.length === 0) { %><tr><td colspan="5" class="empty">No delegations.</td></tr><% } %></tbody></table>
<% if (it.delegatorsPager.pages !== '1') { %><%~ include('@pager', it.delegatorsPager) %><% } %>
<h2>Latest blocks proposed</h2>
<%~ include('@blocksTable', { blocks: it.blocks }) %>
`;
