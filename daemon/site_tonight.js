/*
 * site_tonight.js - the facility site's "tonight" page (daemon/site_tonight.c
 * embeds this file and writes it as tonight.js beside tonight.html).
 *
 * Reads the page's data block (<script type="application/json"
 * id="tonight-data">, compact: docs/fleet.md "Tonight at 8,000 GPUs"),
 * keeps the view's state in the URL's fragment (#model=..&part=..&node=..
 * &ceiling=..&flagged=1&sort=..&page=N, so a view is a link) and draws, for
 * the GPUs that pass the filters, a summary per model and ceiling and one
 * page of PAGE rows.  Only textContent and DOM nodes: no HTML is parsed
 * from the data.
 */
(function () {
	'use strict';
	var PAGE = 100;
	var D = JSON.parse(document.getElementById('tonight-data').textContent);
	var NC = D.ceilings.length;

	function $(id) { return document.getElementById(id); }
	function el(tag, text, cls) {
		var e = document.createElement(tag);
		if (text !== undefined && text !== null) e.textContent = text;
		if (cls) e.className = cls;
		return e;
	}
	function pct(d) { return d === null ? null : 100 + d / 10; }
	function fmt(p) { return p === null || isNaN(p) ? '' : p.toFixed(1); }

	function state() {
		var s = { model: '', part: '', node: '', ceiling: '', flagged: '', sort: 'flagged', page: 1 };
		location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
			var i = kv.indexOf('=');
			if (i > 0 && Object.prototype.hasOwnProperty.call(s, kv.slice(0, i)))
				s[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
		});
		s.page = Math.max(1, parseInt(s.page, 10) || 1);
		return s;
	}
	function setState(s) {
		var kv = [];
		Object.keys(s).forEach(function (k) {
			if (s[k] !== '' && !(k === 'page' && s[k] === 1) && !(k === 'sort' && s[k] === 'flagged'))
				kv.push(k + '=' + encodeURIComponent(s[k]));
		});
		location.hash = kv.join('&');
	}

	/* one GPU as the view needs it: its figure for the ceiling asked (or
	 * its lowest when none is) and whether it is flagged there */
	function view(g, ci) {
		var d = g[5], fl = g[6], best = null, bc = -1;
		if (ci >= 0)
			return { g: g, p: pct(d[ci]), c: ci, f: fl.indexOf(ci) >= 0 };
		for (var i = 0; i < NC; i++)
			if (d[i] !== null && (best === null || d[i] < best)) { best = d[i]; bc = i; }
		if (fl.length) { bc = fl[0]; for (i = 1; i < fl.length; i++) if (d[fl[i]] < d[bc]) bc = fl[i]; }
		return { g: g, p: bc >= 0 ? pct(d[bc]) : null, c: bc, f: fl.length > 0 };
	}

	function select(s) {
		var ci = D.ceilings.indexOf(s.ceiling), out = [];
		var mi = D.models.indexOf(s.model), pi = D.parts.indexOf(s.part);
		for (var i = 0; i < D.gpus.length; i++) {
			var g = D.gpus[i];
			if ((s.model && g[2] !== mi) || (s.part && g[3] !== pi) ||
			    (s.node && g[0].indexOf(s.node) < 0))
				continue;
			var v = view(g, ci);
			if ((s.flagged && !v.f) || (ci >= 0 && v.p === null))
				continue;
			out.push(v);
		}
		var byNode = function (a, b) {
			return a.g[0] < b.g[0] ? -1 : a.g[0] > b.g[0] ? 1 : a.g[1] - b.g[1];
		};
		var byPct = function (a, b) {
			var x = a.p === null ? Infinity : a.p, y = b.p === null ? Infinity : b.p;
			return x - y || byNode(a, b);
		};
		out.sort(s.sort === 'node' ? byNode : s.sort === 'pct' ? byPct :
			 s.sort === 'pct-desc' ? function (a, b) { return byPct(b, a); } :
			 function (a, b) { return (b.f - a.f) || byPct(a, b); });
		return out;
	}

	function quantile(v, q) { return v.length ? v[Math.min(v.length - 1, Math.floor(q * (v.length - 1) + 0.5))] : null; }

	/* per model and ceiling over the GPUs shown: n, flagged, min, p5, median, p95, max */
	function summary(rows, s) {
		var tb = $('summary-body'), ci0 = D.ceilings.indexOf(s.ceiling);
		tb.textContent = '';
		for (var m = 0; m < D.models.length; m++)
			for (var c = 0; c < NC; c++) {
				if (ci0 >= 0 && c !== ci0) continue;
				var v = [], nf = 0;
				rows.forEach(function (r) {
					var g = r.g;
					if (g[2] !== m || g[5][c] === null) return;
					v.push(pct(g[5][c]));
					if (g[6].indexOf(c) >= 0) nf++;
				});
				if (!v.length) continue;
				v.sort(function (a, b) { return a - b; });
				var tr = el('tr');
				tr.dataset.model = D.models[m];
				tr.dataset.ceiling = D.ceilings[c];
				[D.models[m], D.ceilings[c], v.length, nf, fmt(v[0]), fmt(quantile(v, 0.05)),
				 fmt(quantile(v, 0.5)), fmt(quantile(v, 0.95)), fmt(v[v.length - 1]),
				 D.thr[m][c] === null ? '' : '\u00b1' + D.thr[m][c].toFixed(1)].forEach(function (x, i) {
					tr.appendChild(el('td', x, i >= 2 ? 'n' : ''));
				});
				if (nf) tr.className = 'flag';
				tb.appendChild(tr);
			}
	}

	function table(rows, s) {
		var tb = $('gpus-body'), pages = Math.max(1, Math.ceil(rows.length / PAGE));
		var page = Math.min(s.page, pages), from = (page - 1) * PAGE;
		tb.textContent = '';
		rows.slice(from, from + PAGE).forEach(function (r) {
			var g = r.g, tr = el('tr'), a = el('a', 'history');
			tr.dataset.node = g[0];
			tr.dataset.gpu = g[1];
			tr.dataset.pct = r.p === null ? '' : r.p.toFixed(1);
			tr.dataset.flagged = r.f ? '1' : '0';
			if (r.f) tr.className = 'flag';
			[g[0], g[1], D.models[g[2]], D.parts[g[3]] || '(default)',
			 r.c >= 0 ? D.ceilings[r.c] : '', fmt(r.p),
			 g[6].map(function (c) { return D.ceilings[c]; }).join(' ')].forEach(function (x, i) {
				tr.appendChild(el('td', x, i === 1 || i === 5 ? 'n' : ''));
			});
			a.href = 'gpus/' + g[4] + '.html';
			var td = el('td');
			td.appendChild(a);
			tr.appendChild(td);
			tb.appendChild(tr);
		});
		$('count').textContent = rows.length + ' GPUs match' + (rows.length ?
			'; rows ' + (from + 1) + '-' + Math.min(rows.length, from + PAGE) + ', page ' +
			page + ' of ' + pages : '');
		$('prev').disabled = page <= 1;
		$('next').disabled = page >= pages;
		return page;
	}

	function fill(id, values, label) {
		var sel = $(id);
		sel.appendChild(new Option(label, ''));
		values.forEach(function (v) { sel.appendChild(new Option(v || '(default)', v)); });
	}

	function render() {
		var s = state(), rows = select(s);
		$('f-model').value = s.model;
		$('f-part').value = s.part;
		$('f-ceiling').value = s.ceiling;
		$('f-node').value = s.node;
		$('f-flagged').checked = !!s.flagged;
		$('f-sort').value = s.sort;
		summary(rows, s);
		s.page = table(rows, s);
		document.documentElement.dataset.rendered = String(rows.length);
	}

	function init() {
		fill('f-model', D.models, 'every model');
		fill('f-part', D.parts, 'every partition');
		fill('f-ceiling', D.ceilings, 'lowest of each GPU');
		['f-model', 'f-part', 'f-ceiling', 'f-sort', 'f-flagged', 'f-node'].forEach(function (id) {
			$(id).addEventListener('change', function () {
				var s = state();
				s.model = $('f-model').value;
				s.part = $('f-part').value;
				s.ceiling = $('f-ceiling').value;
				s.sort = $('f-sort').value;
				s.flagged = $('f-flagged').checked ? '1' : '';
				s.node = $('f-node').value.trim();
				s.page = 1;
				setState(s);
			});
		});
		$('prev').addEventListener('click', function () { var s = state(); s.page--; setState(s); });
		$('next').addEventListener('click', function () { var s = state(); s.page++; setState(s); });
		window.addEventListener('hashchange', render);
		$('explorer').hidden = false;
		render();
	}
	init();
}());
