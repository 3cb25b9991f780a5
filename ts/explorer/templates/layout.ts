/** The one layout every page renders into (it.body), with the navigation and the search box. */
export const layout = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<% if (it.refresh) { %><meta http-equiv="refresh" content="<%= it.refresh %>">
<% } %><title><%= it.title %> · <%= it.site.name %> explorer</title>
<link rel="stylesheet" href="<%= it.site.links.stylesheet %>">
<link rel="icon" href="<%= it.site.links.favicon %>" type="image/svg+xml">
</head>
<body>
<header class="top">
  <a class="brand" href="<%= it.site.links.home %>"><%= it.site.name %> explorer</a>
  <nav aria-label="Main">
    <a href="<%= it.site.links.blocks %>">Blocks</a>
    <a href="<%= it.site.links.transactions %>">Transactions</a>
    <a href="<%= it.site.links.validators %>">Validators</a>
    <a href="<%= it.site.links.tokens %>">Tokens</a>
    <a href="<%= it.site.links.nfts %>">NFTs</a>
    <a href="<%= it.site.links.richlist %>">Rich list</a>
    <a href="<%= it.site.links.mempool %>">Mempool</a>
  </nav>
  <form class="search" action="<%= it.site.links.search %>" method="get" role="search">
    <input type="search" name="q" value="<%= it.q ?? '' %>" placeholder="Height, block hash, txid, address, token, collection" aria-label="Search the chain" maxlength="200">
    <button type="submit">Search</button>
  </form>
</header>
<main>
<%~ it.body %>
</main>
<footer>
  Chain <%= it.site.chainId %> · <%= it.site.consensus %> · head <a href="<%= it.site.headLink %>"><%= it.site.height %></a> · node <%= it.site.version %>
</footer>
</body>
</html>
`;

/** Error pages (400 malformed input, 404 unknown, 500) share the layout. */
export const errorPage = `<% layout('@layout') %>
<h1><%= it.heading %></h1>
<p class="error"><%= it.message %></p>
<% if (it.input) { %><p>You asked for: <code><%= it.input %></code></p><% } %>
<p><a href="<%= it.site.links.home %>">Back to the explorer home</a></p>
`;
