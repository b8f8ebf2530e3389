/*
 * kernel_name.c - short forms of demangled kernel names.  See kernel_name.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_name.h"

#define BUF 1024

/* Append at most n bytes of s to buf (cap bytes, holding *len). */
static void add(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
	while (n-- && *s && *len + 1 < cap)
		buf[(*len)++] = *s++;
	buf[*len] = '\0';
}

/*
 * The name without its return type and parameter list, "(anonymous
 * namespace)" as anon; template arguments as <...> when `args` is false,
 * kept when true.
 */
static void strip(const char *full, bool args, char *buf, size_t cap)
{
	size_t len = 0, start = 0;
	int angle = 0, paren = 0;

	buf[0] = '\0';
	for (const char *p = full; *p; p++) {
		bool top = !angle && !paren;

		if (strncmp(p, "(anonymous namespace)", 21) == 0) {
			if (top || args)
				add(buf, cap, &len, "anon", 4);
			p += 20;
		} else if (*p == '<') {
			if (top)
				add(buf, cap, &len, args ? "<" : "<...>", args ? 1 : 5);
			else if (args)
				add(buf, cap, &len, p, 1);
			angle++;
		} else if (*p == '>') {
			angle -= angle > 0;
			if (args && (angle || paren))
				add(buf, cap, &len, p, 1);
			else if (args)
				add(buf, cap, &len, ">", 1);
		} else if (*p == '(') {
			if (top && len)
				break;
			if (args && !top)
				add(buf, cap, &len, p, 1);
			paren++;
		} else if (*p == ')') {
			paren -= paren > 0;
			if (args && (angle || paren))
				add(buf, cap, &len, p, 1);
		} else if (top && *p == ' ') {
			start = len + 1; /* what came before was the return type */
			add(buf, cap, &len, p, 1);
		} else if (top || args) {
			add(buf, cap, &len, p, 1);
		}
	}
	while (len && buf[len - 1] == ' ')
		buf[--len] = '\0';
	if (start && start < len)
		memmove(buf, buf + start, len - start + 1);
}

/* s shortened to max bytes from its middle (head...tail) into out. */
static void middle(const char *s, size_t max, char *out, size_t cap)
{
	size_t n = strlen(s), len = 0, head;

	out[0] = '\0';
	if (n <= max || max < 8) {
		add(out, cap, &len, s, n <= max ? n : max);
		return;
	}
	head = (max - 3) / 2;
	add(out, cap, &len, s, head);
	add(out, cap, &len, "...", 3);
	add(out, cap, &len, s + n - (max - 3 - head), max);
}

/* s without leading namespaces while longer than max. */
static const char *drop_namespaces(const char *s, size_t max)
{
	while (strlen(s) > max && strstr(s, "::"))
		s = strstr(s, "::") + 2;
	return s;
}

void kernel_name_short(const char *full, size_t max, char *out, size_t cap)
{
	char buf[BUF];
	const char *s;

	strip(full, false, buf, sizeof(buf));
	s = drop_namespaces(buf, max);
	middle(*s ? s : "kernel", max, out, cap);
}

/* ---- a set of names ----------------------------------------------------- */

static bool separator(char c, const char *set)
{
	return c && strchr(set, c);
}

/*
 * The part of form that tells it from the group's other forms: the group's
 * common prefix p and suffix (from e) dropped, at component boundaries,
 * with the kernel's own name in front.  At most max bytes, into out.
 */
static void distinguish(const char *form, size_t p, size_t e, size_t max,
			char *out, size_t cap)
{
	size_t n = strlen(form), b = strcspn(form, "<"), len = 0;
	char base[BUF], tail[BUF];
	const char *bs;

	while (p > 0 && !separator(form[p - 1], ":<, "))
		p--;
	while (e < n && !separator(form[e], ":>, "))
		e++;
	if (e < p)
		e = p;
	tail[0] = '\0';
	if (p <= b) { /* the difference is in the name itself */
		snprintf(base, sizeof(base), "%.*s", (int)e, form);
		add(tail, sizeof(tail), &len, e < n ? "..." : "", 3);
	} else {
		snprintf(base, sizeof(base), "%.*s", (int)b, form);
		add(tail, sizeof(tail), &len, p > b + 1 ? "<..." : "<", 4);
		add(tail, sizeof(tail), &len, form + p, e - p);
		if (e < n)
			add(tail, sizeof(tail), &len, form[n - 1] == '>' && e < n - 1 ? "...>" : form + e,
			    form[n - 1] == '>' && e < n - 1 ? 4 : n - e);
	}
	bs = drop_namespaces(base, max > len ? max - len : 0);
	out[0] = '\0';
	len = 0;
	if (strlen(bs) + strlen(tail) <= max) {
		add(out, cap, &len, bs, strlen(bs));
		add(out, cap, &len, tail, strlen(tail));
	} else if (strlen(tail) + 8 <= max) { /* the name's head, then the part */
		add(out, cap, &len, bs, max - strlen(tail) - 3);
		add(out, cap, &len, "...", 3);
		add(out, cap, &len, tail, strlen(tail));
	} else { /* the part's head: its first component tells most */
		size_t bl = strlen(bs), room;

		if (bl > max / 2) {
			add(out, cap, &len, bs, max / 2 - 3);
			add(out, cap, &len, "...", 3);
		} else {
			add(out, cap, &len, bs, bl);
		}
		room = max - len;
		add(out, cap, &len, tail, room - 3);
		add(out, cap, &len, "...", 3);
	}
}

/* Index of the first full name equal to full[i]. */
static size_t first_of(const char *const *full, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(full[j], full[i]) == 0)
			return j;
	return i;
}

/* The characters of an identifier (and of a number: 1u). */
#define IDENT "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

/* Whether the identifier tok (n bytes) is one of form's identifiers. */
static bool has_token(const char *form, const char *tok, size_t n)
{
	for (const char *q = form; *q;) {
		size_t k = strspn(q, IDENT);

		if (k == n && strncmp(q, tok, n) == 0)
			return true;
		q += k ? k : strcspn(q, IDENT);
	}
	return false;
}

/*
 * The group's m members (forms[], stripped with their arguments) told
 * apart by the first identifier of each that no other member has, as
 * base<...identifier...>, into out[idx[a]].  For groups where dropping the
 * common prefix and suffix leaves parts too long to show: nvcc's extended
 * __device__ lambdas make every kernel for_each_kernel<__nv_dl_wrapper_t<
 * __nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::copy,
 * 1u>, ...>, and one of another signature in the group (init_arrays)
 * shortens the shared prefix.  False, out untouched, when a member has no
 * identifier of its own.
 */
static bool by_token(char (*forms)[BUF], size_t m, size_t max, char **out,
		     const size_t *idx)
{
	const char **tok = calloc(m, sizeof(*tok));
	size_t *tlen = calloc(m, sizeof(*tlen));
	bool ok = tok && tlen;

	for (size_t a = 0; ok && a < m; a++) {
		for (const char *q = forms[a]; *q && !tok[a];) {
			size_t k = strspn(q, IDENT);
			bool other = false;

			for (size_t b = 0; k && b < m && !other; b++)
				other = b != a && has_token(forms[b], q, k);
			if (k && !other) {
				tok[a] = q;
				tlen[a] = k;
			}
			q += k ? k : strcspn(q, IDENT);
		}
		ok = tok[a] != NULL;
	}
	for (size_t a = 0; ok && a < m; a++) {
		char base[BUF], *o = out[idx[a]];
		/* "<..." and "...>" around the identifier, at most max - 8 of it */
		size_t b = strcspn(forms[a], "<"), len = 0, t = tlen[a] < max - 8 ? tlen[a] : max - 8;
		size_t room = max - 8 - t;
		const char *bs;

		snprintf(base, sizeof(base), "%.*s", (int)b, forms[a]);
		bs = drop_namespaces(base, room);
		o[0] = '\0';
		if (strlen(bs) <= room) {
			add(o, max + 1, &len, bs, strlen(bs));
		} else if (room > 3) {
			add(o, max + 1, &len, bs, room - 3);
			add(o, max + 1, &len, "...", 3);
		}
		add(o, max + 1, &len, "<...", 4);
		add(o, max + 1, &len, tok[a], t);
		add(o, max + 1, &len, "...>", 4);
	}
	free(tok);
	free(tlen);
	return ok;
}

/* Refine the group of names whose short form equals out[i]'s (i the first
 * of them) with what tells them apart: the group's common prefix and
 * suffix dropped (distinguish), or, where that leaves two of them equal,
 * each one's own identifier (by_token); what is still equal gets ~N later. */
static void refine(const char *const *full, size_t n, size_t max, char **out,
		   const bool *own, size_t i, bool *done)
{
	char (*forms)[BUF] = NULL;
	size_t *idx = calloc(n, sizeof(*idx));
	size_t p = SIZE_MAX, s = SIZE_MAX, m = 0;
	bool clash = false;

	for (size_t j = i; idx && j < n; j++)
		if (own[j] && !done[j] && !strcmp(out[j], out[i]))
			idx[m++] = j;
	if (m < 2 || !(forms = calloc(m, sizeof(*forms))))
		goto out_free;
	for (size_t a = 0; a < m; a++) {
		size_t k = 0, la, lb;

		strip(full[idx[a]], true, forms[a], BUF);
		while (forms[0][k] && forms[0][k] == forms[a][k])
			k++;
		p = k < p ? k : p;
		la = strlen(forms[0]);
		lb = strlen(forms[a]);
		for (k = 0; k < la && k < lb && forms[0][la - 1 - k] == forms[a][lb - 1 - k]; k++)
			;
		s = k < s ? k : s;
	}
	for (size_t a = 0; a < m; a++) {
		size_t len = strlen(forms[a]);

		distinguish(forms[a], p, len - (s < len ? s : len), max, out[idx[a]], max + 1);
		done[idx[a]] = true;
	}
	for (size_t a = 1; a < m && !clash; a++)
		for (size_t b = 0; b < a && !clash; b++)
			clash = !strcmp(out[idx[a]], out[idx[b]]);
	if (clash)
		by_token(forms, m, max, out, idx);
out_free:
	free(forms);
	free(idx);
}

int kernel_names_short(const char *const *full, size_t n, size_t max,
		       unsigned flags, char **out)
{
	bool *own = calloc(n ? n : 1, sizeof(*own));
	bool *done = calloc(n ? n : 1, sizeof(*done));
	char first[BUF];
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		out[i] = NULL;
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (!own || !done || !(out[i] = malloc(max + 1)))
			rc = -1;
	if (rc < 0) {
		kernel_names_free(out, n);
		free(own);
		free(done);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		own[i] = first_of(full, i) == i;
		if (!own[i])
			continue;
		if ((flags & KERNEL_NAME_WHOLE_FITS) && strlen(full[i]) <= max) {
			strcpy(out[i], full[i]);
			done[i] = true;
		} else {
			kernel_name_short(full[i], max, out[i], max + 1);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (own[i] && !done[i])
			refine(full, n, max, out, own, i, done);
	/* what is left equal: ~2, ~3, ... in order of appearance */
	for (size_t i = 0; i < n; i++) {
		bool clash = true;

		if (!own[i])
			continue;
		snprintf(first, sizeof(first), "%s", out[i]);
		for (int k = 2; clash; k++) {
			clash = false;
			for (size_t j = 0; j < i && !clash; j++)
				clash = own[j] && strcmp(out[j], out[i]) == 0;
			if (clash) {
				char sfx[24];
				int m = snprintf(sfx, sizeof(sfx), "~%d", k);
				size_t keep = strlen(first);

				if (keep + (size_t)m > max)
					keep = max - (size_t)m;
				snprintf(out[i], max + 1, "%.*s%s", (int)keep, first, sfx);
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!own[i])
			strcpy(out[i], out[first_of(full, i)]);
	free(own);
	free(done);
	return 0;
}

void kernel_names_free(char **out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(out[i]);
		out[i] = NULL;
	}
}
