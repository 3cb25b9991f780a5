/** The one stylesheet and the favicon, served from memory. */

export const STYLESHEET = `:root{--fg:#1d2430;--muted:#5b6472;--line:#dfe3ea;--bg:#f6f7f9;--card:#fff;--link:#1f5fc9;--good:#1d7a46;--bad:#b3261e;--warn:#8a5a00}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
header.top{display:flex;flex-wrap:wrap;gap:12px;align-items:center;padding:10px 20px;background:#14213d;color:#fff}
header.top a{color:#dfe8ff}.brand{font-weight:700;font-size:16px;color:#fff!important;margin-right:8px}
header nav{display:flex;flex-wrap:wrap;gap:14px;flex:1}
form.search{display:flex;gap:6px}form.search input{width:26em;max-width:60vw;padding:6px 8px;border:1px solid #51607f;border-radius:4px}
form.search button{padding:6px 12px;border:0;border-radius:4px;background:#3d6fe0;color:#fff;cursor:pointer}
main{max-width:1240px;margin:0 auto;padding:16px 20px}
footer{max-width:1240px;margin:0 auto;padding:16px 20px;color:var(--muted);font-size:12px}
h1{font-size:22px;margin:8px 0 12px}h2{font-size:17px;margin:22px 0 8px}h3{font-size:15px;margin:16px 0 6px}
.more{font-size:12px;font-weight:400;margin-left:8px}
.muted{color:var(--muted)}.error{color:var(--bad)}.empty{color:var(--muted);text-align:center;padding:14px}
.mono,code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.wrap{word-break:break-all;white-space:pre-wrap}
table.list{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line)}
table.list th,table.list td{padding:6px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
table.list th{background:#eef1f5;font-weight:600;font-size:12.5px}
.num{text-align:right!important;white-space:nowrap}
dl.fields{display:grid;grid-template-columns:max-content 1fr;gap:6px 18px;background:var(--card);border:1px solid var(--line);padding:12px 14px;margin:0}
dl.fields dt{color:var(--muted)}dl.fields dd{margin:0;min-width:0;overflow-wrap:anywhere}
.stats{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:10px}
.stat{background:var(--card);border:1px solid var(--line);padding:10px 12px}.stat .label{color:var(--muted);font-size:12px}.stat .value{font-size:17px;font-weight:600}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:12px;margin-top:12px}
figure.chart svg{display:block;max-height:240px}figure.chart{margin:0;background:var(--card);border:1px solid var(--line);padding:10px}figure.chart figcaption{color:var(--muted);font-size:12px}
.two{display:grid;grid-template-columns:minmax(0,1fr);gap:16px}.two>div{min-width:0;overflow-x:auto}
.badge{display:inline-block;padding:1px 7px;border-radius:10px;background:#e8ebf0;color:var(--fg);font-size:11.5px}
.badge.good{background:#dcf3e5;color:var(--good)}.badge.bad{background:#fbe2df;color:var(--bad)}.badge.warn{background:#fdf0d2;color:var(--warn)}
.kind{font-size:12.5px}
nav.pager{display:flex;gap:16px;align-items:center;margin:10px 0}
nav.tabs{display:flex;gap:16px;margin:16px 0 0}nav.tabs a[aria-current]{font-weight:700}
ul.inline{display:flex;flex-wrap:wrap;gap:4px 14px;list-style:none;padding:0;margin:4px 0 0}
ul.legend{display:flex;flex-wrap:wrap;gap:4px 14px;list-style:none;padding:0;margin:6px 0 0;font-size:12px}
.depth{display:inline-block}.d1{padding-left:14px}.d2{padding-left:28px}.d3{padding-left:42px}.d4{padding-left:56px}.d5{padding-left:70px}.d6{padding-left:84px}.d7,.d8,.d9,.d10,.d11,.d12{padding-left:98px}
.log{background:var(--card);border:1px solid var(--line);padding:8px 10px;margin:6px 0}ol.topics{margin:4px 0;padding-left:22px}
pre.source{max-height:480px;overflow:auto;background:#fbfbfc;border:1px solid var(--line);padding:8px}
details summary{cursor:pointer}
`;

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#14213d"/><rect x="3" y="3" width="4" height="4" fill="#dfe8ff"/><rect x="9" y="9" width="4" height="4" fill="#dfe8ff"/><rect x="6" y="6" width="4" height="4" fill="#3d6fe0"/></svg>`;
