"""Search as a reader gets it, in Debian's Chromium: every name, alias and abbreviation of every
term puts that term's page first, and so does each name of five letters or more typed one
letter wrong.

Every query goes through the search box of one page, in turn: Material's own search worker
answers it, Material renders the results, javascripts/glossary.js arranges them, and the
first result is read. The page counts the worker's questions and answers (it does not
change them), so each query is read once Material has answered it and glossary.js has
arranged that answer, whatever the machine's speed. The site, its server and the browser are
the session's (tests/browsing.py), as test_browser.py's.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_browser import Reader, shot

from conftest import ROOT
from cudagloss.model.project import Project

pytestmark = [pytest.mark.browser, pytest.mark.builders]

COUNT_WORKER = """(() => {
    // Counts the messages of Material's search worker: 1 ready, 2 a query, 3 its results.
    const Native = window.Worker;
    const traffic = window.__searchTraffic = {ready: false, asked: 0, answered: 0};
    window.Worker = class extends Native {
        constructor(...args) {
            super(...args);
            this.addEventListener("message", event => {
                if (event.data && event.data.type === 1) traffic.ready = true;
                if (event.data && event.data.type === 3) traffic.answered++;
            });
        }
        postMessage(message, ...rest) {
            if (message && message.type === 2) traffic.asked++;
            return super.postMessage(message, ...rest);
        }
    };
})();"""

FIRST_RESULTS = """async queries => {
    const traffic = window.__searchTraffic;
    const box = document.querySelector("input[data-md-component='search-query']");
    const list = document.querySelector(".md-search-result__list");
    while (!traffic.ready) await new Promise(resolve => setTimeout(resolve, 10));
    // glossary.js marks the list with the query after each arrangement, the last step of an answer.
    const marked = done => new Promise(resolve => {
        const watch = new MutationObserver(() => done() && (watch.disconnect(), resolve()));
        watch.observe(list, {attributes: true, attributeFilter: ["data-glossary-query"]});
    });
    const firsts = [];
    for (const query of queries) {
        const asked = traffic.asked;
        const answered = () =>
            traffic.asked > asked && traffic.answered === traffic.asked && list.dataset.glossaryQuery === query;
        const waiting = marked(answered);
        box.value = query;
        box.dispatchEvent(new KeyboardEvent("keyup", {bubbles: true}));  // what Material listens to
        await waiting;
        firsts.push([...list.querySelectorAll(":scope > li > a:first-child")].slice(0, 3)
            .map(a => new URL(a.href).pathname));
    }
    return firsts;
}"""


def _names() -> dict[str, list[str]]:
    """Every term's names as its file gives them: name, aliases, abbreviations."""
    from cudagloss.load.glossary import load_glossary

    corpus = load_glossary(Project(root=ROOT, terms_dir=ROOT / "terms", measurements_dir=ROOT / "measurements"))
    return {t.slug: [t.term.name, *t.term.aliases, *t.term.abbreviations] for t in corpus.alphabetical()}


def _fold(text: str) -> str:
    return " ".join(re.split(r"[\s\-]+", text.replace('"', "").lower())).strip()


def _one_edit(a: str, b: str) -> bool:
    """Within one edit: a letter left out, added or changed, or two neighbours swapped."""
    if len(a) < len(b):
        a, b = b, a
    if len(a) - len(b) > 1:
        return False
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(b))
    if len(a) > len(b):
        return a[i + 1 :] == b[i:]
    return a[i + 1 :] == b[i + 1 :] or (a[i : i + 2] == b[i : i + 2][::-1] and a[i + 2 :] == b[i + 2 :])


def _typo(name: str, kind: int, others: list[str]) -> str | None:
    """name with one letter left out, doubled, changed or swapped with the next (kind, in
    turn), nearest its middle, where that is one edit from no other term's name."""
    letters = [i for i, c in enumerate(name) if c.isalpha()]
    middle = letters[len(letters) // 2]
    for i in sorted(letters, key=lambda k: abs(k - middle)):
        if kind == 0:
            typo = name[:i] + name[i + 1 :]
        elif kind == 1:
            typo = name[:i] + name[i] + name[i:]
        elif kind == 2:
            typo = name[:i] + ("q" if name[i] in "xX" else "x") + name[i + 1 :]
        elif i + 1 < len(name) and name[i + 1].isalpha() and name[i + 1] != name[i]:
            typo = name[:i] + name[i + 1] + name[i] + name[i + 2 :]
        else:
            continue
        if not any(_one_edit(_fold(typo), _fold(other)) for other in others):
            return typo
    return None


def _queries() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(query, slug) for every name, and for a typo of each name of five letters or more."""
    names = _names()
    exact = [(name.replace('"', ""), slug) for slug, own in names.items() for name in own]
    typos = []
    long = [(name.replace('"', ""), slug) for name, slug in exact if len(name.replace('"', "")) >= 5]
    for kind, (name, slug) in enumerate(long):
        others = [o for s, own in names.items() if s != slug for o in own]
        typos.append((_typo(name, kind % 4, others) or f"no typo of {name!r}", slug))
    return exact, typos


@pytest.fixture
def searcher(browser: Any, base: str) -> Any:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(COUNT_WORKER)
    reader = Reader(context.new_page(), base)
    yield reader
    context.close()


def test_every_name_and_every_one_letter_typo_puts_its_term_first(searcher: Reader) -> None:
    exact, typos = _queries()
    assert len(exact) >= 148 and len(typos) >= 0.8 * len(exact)
    assert not [q for q, _ in typos if q.startswith("no typo")]
    expected = dict(exact + typos)
    assert len(expected) == len(set(exact + typos))  # no query is two terms'
    page = searcher.open("")
    page.locator("input[data-md-component='search-query']").click()
    firsts = dict(zip(expected, page.evaluate(FIRST_RESULTS, list(expected)), strict=True))
    wrong = [
        f"{query!r} ({slug}): {firsts[query]}"
        for query, slug in expected.items()
        if firsts[query][:1] != [f"/terms/{slug}/"]
    ]
    assert wrong == [], f"{len(wrong)} of {len(expected)}:\n" + "\n".join(wrong)
    assert searcher.problems == []


@pytest.mark.parametrize(
    ("query", "slug", "shown"),
    [("SM", "streaming-multiprocessor", None), ("ocupancy", "occupancy", "Did you mean")],
)
def test_enter_opens_the_term_put_first(searcher: Reader, query: str, slug: str, shown: str | None) -> None:
    """Typed as a reader types it; Enter opens the first result (Material opens the best score)."""
    page = searcher.open("")
    page.locator("input[data-md-component='search-query']").click()
    page.keyboard.type(query)
    page.wait_for_function(
        "q => document.querySelector('.md-search-result__list').dataset.glossaryQuery === q", arg=query
    )
    first = page.locator(".md-search-result__list > li").first
    assert first.locator("a").first.evaluate("a => new URL(a.href).pathname") == f"/terms/{slug}/"
    if shown:
        assert first.inner_text().startswith(shown)
    assert page.locator(".md-search-result .md-tags").evaluate_all("els => els.filter(e => e.offsetParent)") == []
    page.screenshot(path=shot(f"search-{slug}.png"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(f"/terms/{slug}/"))
    assert searcher.problems == []
