// The glossary's own script: no page content reaches this file (it is the site's own, listed
// in extra_javascript), and nothing it shows is parsed as HTML.

// A definition shown on hover or focus (Material's tooltips) can be dismissed with Escape
// without moving the pointer or the focus (WCAG 2.1, 1.4.13); it shows again on the next
// focus or hover.
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") document.body.classList.add("glossary-tooltips-dismissed");
});
for (const type of ["focusin", "mouseover"]) {
  document.addEventListener(type, () => document.body.classList.remove("glossary-tooltips-dismissed"), true);
}

// Arrow keys walk the reading order: on a term page, Left and Right follow the links under
// "Continue reading" (the page works without this; the links are there for everyone). Only
// when nothing is focused and no key modifier is held, so a table scrolled sideways, a form
// field or the browser's own shortcuts keep their keys.
document.addEventListener("keydown", (event) => {
  if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey || event.defaultPrevented) return;
  const focused = document.activeElement;
  if (focused && focused !== document.body) return;
  const heading = document.getElementById("continue-reading");
  const list = heading && heading.nextElementSibling;
  if (!list) return;
  const want = event.key === "ArrowLeft" ? "Previous:" : "Next:";
  for (const item of list.querySelectorAll("li")) {
    const link = item.querySelector("a[href]");
    if (link && item.textContent.trim().startsWith(want)) {
      window.location.assign(link.href);
      return;
    }
  }
});

// Search: a term's own name first, and a name typed one letter wrong still found.
//
// Material's search (lunr) searches every word typed as the start of a word and ranks by
// how rare the words it matched are: "SM" matches the rare "SMEM" of shared memory above the
// "SM" that four terms' names share, and "ocupancy" matches nothing. So once Material has
// shown its results, the term whose name, alias or abbreviation is exactly what was typed
// (case, hyphens and spaces aside) is moved first, or, where none is, each term with a name
// of five letters or more one edit away (a letter left out, added, changed, or two swapped);
// a term Material did not list is added as a result of its own ("Did you mean"). The names
// come from glossary-names.json, beside this file, written from the term files at render time
// (cudagloss.site.search_names); they reach the page as text (textContent), never as HTML.
// Zensical's search has another interface and is left as it is.
(() => {
  const script = document.currentScript;
  const result = document.querySelector("[data-md-component='search-result']");
  const query = document.querySelector("input[data-md-component='search-query']");
  const list = result && result.querySelector(".md-search-result__list");
  if (!script || !list || !query) return;
  const NAMES = new URL("glossary-names.json", script.src);
  const ROOT = new URL("../", script.src);
  const GUESSES = 3;
  let terms = null;
  let loading = null;

  const fold = (text) =>
    String(text).normalize("NFKC").toLowerCase().replace(/["\u201c\u201d]/g, "").split(/[\s\-]+/).filter(Boolean).join(" ");

  // Whether two names, as arrays of code points, are at most one edit apart (optimal string
  // alignment): a letter left out, added or changed, or two neighbours swapped.
  const sameFrom = (a, i, b, j) => a.length - i === b.length - j && a.slice(i).every((c, k) => c === b[j + k]);
  const withinOne = (a, b) => {
    if (a.length < b.length) [a, b] = [b, a];
    if (a.length - b.length > 1) return false;
    let i = 0;
    while (i < b.length && a[i] === b[i]) i++;
    if (i === a.length) return true;
    if (a.length > b.length) return sameFrom(a, i + 1, b, i);
    return sameFrom(a, i + 1, b, i + 1) || (a[i] === b[i + 1] && a[i + 1] === b[i] && sameFrom(a, i + 2, b, i + 2));
  };

  const load = () => {
    loading ||= fetch(NAMES)
      .then((response) => (response.ok ? response.json() : { terms: [] }))
      .catch(() => ({ terms: [] }))
      .then((data) => {
        terms = (Array.isArray(data.terms) ? data.terms : []).flatMap((t) => {
          const href = new URL(String(t.url), ROOT);
          if (href.origin !== ROOT.origin) return [];
          const names = (Array.isArray(t.names) ? t.names : []).map(fold);
          return [{ href, name: String(t.name), definition: String(t.definition || ""), names, points: names.map((n) => [...n]) }];
        });
        arrange();
      });
    return null;
  };

  // The terms to put first for what was typed, each with whether it is a guess.
  const picks = (typed) => {
    const wanted = fold(typed);
    if (!wanted) return [];
    const exact = terms.filter((t) => t.names.includes(wanted));
    if (exact.length) return exact.map((t) => ({ t, guess: false }));
    const points = [...wanted];
    if (points.length < 4) return [];
    return terms
      .filter((t) => t.points.some((name) => name.length >= 5 && withinOne(points, name)))
      .slice(0, GUESSES)
      .map((t) => ({ t, guess: true }));
  };

  const path = (href) => new URL(href, location.href).pathname;

  const element = (tag, className, text) => {
    const el = document.createElement(tag);
    if (className) el.className = className;
    if (text !== undefined) el.textContent = text;
    return el;
  };

  const item = ({ t, guess }) => {
    const li = element("li", "md-search-result__item glossary-pick");
    const a = element("a", "md-search-result__link");
    a.href = t.href.href;
    a.tabIndex = -1;
    const article = element("article", "md-search-result__article md-typeset");
    article.append(element("div", "md-search-result__icon md-icon"));
    if (guess) article.append(element("p", "glossary-pick__guess", "Did you mean"));
    article.append(element("h1", "", t.name));
    if (t.definition) article.append(element("p", "", t.definition));
    a.append(article);
    li.append(a);
    return li;
  };

  // Idempotent: it changes the list only where the picks are not already first, so the
  // mutations it makes itself end in a call that changes nothing.
  function arrange() {
    if (terms === null) return load();
    const typed = query.value;
    const chosen = picks(typed);
    const items = [...list.children];
    const pathOf = (li) => {
      const a = li.querySelector("a[href]");
      return a ? path(a.getAttribute("href")) : null;
    };
    chosen.forEach((pick, i) => {
      const own = pick.t.href.pathname;
      const theirs = items.find((li) => !li.classList.contains("glossary-pick") && pathOf(li) === own);
      const ours = items.find((li) => li.classList.contains("glossary-pick") && pathOf(li) === own);
      if (theirs && ours) ours.remove();
      const li = theirs || ours || item(pick);
      if (list.children[i] !== li) list.insertBefore(li, list.children[i] || null);
    });
    const keep = new Set(chosen.map((pick) => pick.t.href.pathname));
    for (const li of list.querySelectorAll(":scope > .glossary-pick")) {
      if (!keep.has(pathOf(li))) li.remove();
    }
    // Enter opens the result with the highest score: the picks', in their order.
    const first = [...list.children].slice(0, chosen.length);
    const others = [...list.querySelectorAll(".md-search-result__article[data-md-score]")]
      .filter((article) => !first.some((li) => li.contains(article)));
    const top = Math.max(0, ...others.map((article) => parseFloat(article.dataset.mdScore) || 0));
    first.forEach((li, i) => {
      li.querySelector(".md-search-result__article").dataset.mdScore = String(top + chosen.length - i);
    });
    list.dataset.glossaryQuery = typed;
    return null;
  }

  new MutationObserver(arrange).observe(result, { childList: true, subtree: true });
})();
