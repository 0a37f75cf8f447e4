"""The instruction-availability page shows computed/instruction-availability.json: a cell per
feature and compute capability that agrees with the file, each "no" linked to its refusal,
every refusal in the compiler's words, and hostile strings from the file shown as text."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import markdown
import pytest

from conftest import ROOT
from cudagloss.load.glossary import load_glossary
from cudagloss.load.project import load_project
from cudagloss.model.computed_set import ComputedSet
from cudagloss.model.corpus import Corpus
from cudagloss.site.renderer import Renderer
from cudagloss.site.sanitise import NAME as SANITISER

SLUG = "instruction-availability"
FILE = ROOT / "computed" / f"{SLUG}.json"
HOLE = "‹target›"
EXTENSIONS = ["admonition", "tables", "pymdownx.details", "pymdownx.highlight", "pymdownx.superfences", SANITISER]
"""The page's Markdown extensions (mkdocs.yml), the sanitiser last."""
CELL = re.compile(r'^\[(?P<text>[^\]]+)\]\(#(?P<anchor>refused-[a-z0-9-]+) "(?P<title>[^"]*)"\)$|^(?P<plain>yes)$')
RAN = re.compile(r', \[ran on (?P<n>\d+)\]\((?P<href>[^ )]+) "(?P<title>[^"]*)"\)$')
"""The count a compiled cell ends with where cards ran the feature's kernel (instruction-availability experiment)."""


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_glossary(load_project(ROOT / "mkdocs.yml", {}))


def _page(corpus: Corpus) -> str:
    return Renderer(corpus, load_project(ROOT / "mkdocs.yml", {})).term_page(SLUG).markdown


def _hostile_page(corpus: Corpus, tmp_path: Path, data: Any) -> str:
    folder = tmp_path / "computed"
    folder.mkdir()
    (folder / f"{SLUG}.json").write_text(json.dumps(data), encoding="utf-8")
    hostile = ComputedSet(folder, tmp_path)
    assert hostile.get(SLUG)[1] == []
    was = corpus.computed
    corpus.computed = hostile
    try:
        return _page(corpus)
    finally:
        corpus.computed = was


def _section(md: str) -> str:
    return md.split("## Computed by NVIDIA's tools\n", 1)[1].split("\n## ", 1)[0]


def _cells(line: str) -> list[str]:
    """A table row's cells: split at each '|' that no backslash escapes."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _rows(md: str) -> list[list[str]]:
    """The availability table's rows, each cell without the count of cards that ran it."""
    return [[RAN.sub("", c) for c in row] for row in _counted_rows(md)]


def _counted_rows(md: str) -> list[list[str]]:
    first = _section(md).split("\n\n| Feature |", 1)[1].split("\n\n", 1)[0]  # the table, not the SASS ones
    return [_cells(line) for line in ("| Feature |" + first).splitlines() if line.startswith("| ")]


def _ran_in_files() -> dict[tuple[str, str], int]:
    """(feature, compute capability) -> the committed cards (one good file each, `~` files are
    earlier runs) whose instruction-availability run says its kernel ran: read from the JSON here."""
    counts: dict[tuple[str, str], int] = {}
    for path in sorted((ROOT / "measurements" / SLUG).glob("*.json")):
        if "~" in path.name:
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc["status"] != "ok":
            continue
        cc = doc["provenance"]["compute_capability"]
        for r in doc["results"]:
            if r["name"].endswith("_on_this_gpu") and r["value"] == "ran":
                key = (r["name"].removesuffix("_on_this_gpu").replace("_", "-"), cc)
                counts[key] = counts.get(key, 0) + 1
    return counts


REFUSAL_ROW = re.compile(
    r'<tr><td><a id="(refused-[a-z0-9-]+)"></a><code>([^<]+)</code></td><td>([^<]+)</td>'
    r"<td><code>([^<]+)</code>( \[sic\])?</td></tr>"
)


def _refusal_rows(md: str) -> list[tuple[str, str, str, str, str]]:
    """(anchor, feature, targets, message, ' [sic]' or '') of each row of the refusals' table."""
    table = md.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = REFUSAL_ROW.findall(table)
    assert len(rows) == table.count("<tr")
    return rows


def _html(md: str) -> str:
    body = md.split("\n---\n", 1)[1] if md.startswith("---\n") else md
    return markdown.markdown(body, extensions=EXTENSIONS)


def _expected_cell(values: dict[str, dict[str, str]], feature: str, plain: str) -> str:
    if values[plain][feature] == "compiled":
        return "yes"
    family = [t for t in values if t != plain and t[:-1] == plain]
    compiled = [t for t in sorted(family) if values[t][feature] == "compiled"]
    return ", ".join(compiled) if compiled else "no"


def test_every_cell_agrees_with_the_file(corpus: Corpus) -> None:
    data = json.loads(FILE.read_text(encoding="utf-8"))
    values = data["values"]
    plain = sorted((t for t in values if t[-1].isdigit()), key=lambda t: int(t[3:]))
    md = _page(corpus)
    head, *body = _rows(md)
    assert head == ["Feature", *(f"{t[3:-1]}.{t[-1]}" for t in plain)]
    assert "9.0" in head and head.index("8.9") < head.index("9.0") < head.index("10.0") < head.index("12.1")
    assert "\n|---|" + ":-:|" * (len(head) - 1) + "\n" in md
    assert [re.search(r"`([a-z0-9-]+)`", r[0])[1] for r in body] == [f["id"] for f in data["features"]]  # type: ignore[index]
    shown = {"yes": 0, "no": 0, "suffixed": 0}
    row_of = {(f, t): a for a, f, targets, _, _ in _refusal_rows(md) for t in targets.split(", ")}
    for feature, row in zip(data["features"], body, strict=True):
        assert len(row) == len(head)
        for target, cell in zip(plain, row[1:], strict=True):
            found = CELL.match(cell)
            assert found, cell
            text = found["plain"] or found["text"]
            assert text == _expected_cell(values, feature["id"], target), (feature["id"], target, cell)
            shown["yes" if text == "yes" else "no" if text == "no" else "suffixed"] += 1
            if text != "yes":
                assert found["anchor"] == row_of[(feature["id"], target)]  # the row of this target's refusal
                also = "" if text == "no" else f"; {text} compiled it"
                assert (
                    html.unescape(found["title"]).replace("\\_", "_")
                    == f"{target} refused it: {values[target][feature['id']]}{also} (listed below the table)"
                )
    assert all(shown.values()), shown  # the file has each kind of cell: the test saw them all


def test_each_count_of_cards_that_ran_a_feature_agrees_with_the_measurement_files(corpus: Corpus) -> None:
    data = json.loads(FILE.read_text(encoding="utf-8"))
    md = _page(corpus)
    head, *body = _counted_rows(md)
    shown: dict[tuple[str, str], int] = {}
    for feature, row in zip(data["features"], body, strict=True):
        for cc, cell in zip(head[1:], row[1:], strict=True):
            if found := RAN.search(cell):
                shown[(feature["id"], cc)] = int(found["n"])
                assert found["href"] == "../measurements/instruction-availability.md"
                assert CELL.match(RAN.sub("", cell))["text" if "](#" in cell else "plain"] != "no"  # type: ignore[index]
                cards = "card" if found["n"] == "1" else "cards"
                assert html.unescape(found["title"]) == (
                    f"its kernel ran on {found['n']} {cards} of compute capability {cc} "
                    "(instruction-availability experiment)"
                )
    assert shown == _ran_in_files()
    if shown:
        assert "[instruction-availability experiment](../measurements/instruction-availability.md) ran on 9.0: " in md


def test_counts_are_distinct_cards_of_each_compute_capability_and_only_ran_counts() -> None:
    from cudagloss.model.measurement import Measurement, Result
    from cudagloss.model.measurements import ExperimentRecord, NodeRun
    from cudagloss.site.availability_view import _ran_on, cards_by_capability, ran_counts

    def run(node: str, cc: str, **values: str) -> NodeRun:
        results = [Result(f"{k}_on_this_gpu", v) for k, v in values.items()]
        gpu = {"9.0": "NVIDIA H100 80GB HBM3" if node == "a" else "NVIDIA H200", "12.0": "NVIDIA GeForce RTX 5090"}[cc]
        return NodeRun(node, Measurement(SLUG, "", "", "ok", {"compute_capability": cc, "gpu_name": gpu}, [], results))

    record = ExperimentRecord(
        SLUG,
        None,
        [
            run("a", "9.0", wgmma="ran", tcgen05_mma="loaded"),
            run("b", "9.0", wgmma="CUDA_ERROR_ILLEGAL_ADDRESS"),
            run("c", "12.0", wgmma="refused by the compiler", mma_e2m1="ran"),
            NodeRun("d", None),
        ],
    )
    assert ran_counts(record) == {("9.0", "wgmma_on_this_gpu"): 1, ("12.0", "mma_e2m1_on_this_gpu"): 1}
    assert _ran_on(cards_by_capability(record)) == "9.0: 2 cards (H100, H200); 12.0: 1 card (GeForce RTX 5090)"
    assert ran_counts(None) == {} and cards_by_capability(None) == {}


def test_each_no_links_to_a_refusal_that_is_on_the_page(corpus: Corpus) -> None:
    md = _page(corpus)
    anchors = set(re.findall(r'<a id="(refused-[a-z0-9-]+)"></a>', md))
    linked = {CELL.match(c)["anchor"] for row in _rows(md)[1:] for c in row[1:] if CELL.match(c)["anchor"]}  # type: ignore[index]
    assert linked and linked <= anchors
    assert len(re.findall(r'<a id="refused-', md)) == len(anchors) == len(_refusal_rows(md))  # one per row, once
    page = _html(md)
    for anchor in anchors:
        assert page.count(f'id="{anchor}"') == 1 and f'href="#{anchor}"' in page


def test_every_refusal_of_the_file_is_on_the_page_for_its_targets(corpus: Corpus) -> None:
    data = json.loads(FILE.read_text(encoding="utf-8"))
    md = _page(corpus)
    rows = _refusal_rows(md)
    said: dict[tuple[str, str], str] = {}
    for _, feature, targets, message, sic in rows:
        assert bool(sic) == bool(re.search(r"\b(\w+) \1\b", html.unescape(message)))  # 'with with' [sic]
        for target in targets.split(", "):
            said[(feature, target)] = html.unescape(message)
    refused = {
        (fid, target): verdict
        for target, row in data["values"].items()
        for fid, verdict in row.items()
        if verdict != "compiled"
    }
    assert set(said) == set(refused)
    for (fid, target), verdict in refused.items():
        assert said[(fid, target)].replace(HOLE, target) == verdict
    assert any(HOLE in m for m in said.values())


def test_every_kernel_is_shown_as_it_is_written(corpus: Corpus) -> None:
    data = json.loads(FILE.read_text(encoding="utf-8"))
    md = _page(corpus)
    for feature in data["features"]:
        block = "\n".join("    " + line if line.strip() else "" for line in feature["source"].strip("\n").split("\n"))
        assert f"    ```cuda\n{block}\n    ```\n" in md


def test_the_page_converts_to_a_table_of_every_feature(corpus: Corpus) -> None:
    data = json.loads(FILE.read_text(encoding="utf-8"))
    page = _html(_page(corpus))
    first_table = page.split("<table>", 1)[1].split("</table>", 1)[0]
    assert first_table.count("<tr>") == len(data["features"]) + 1
    assert "<details" in page and "<script" not in page


HOSTILE_LABEL = 'says "hi") ](javascript:x) | [y](javascript:z "t") <img src=x onerror=alert(1)>'
HOSTILE_REFUSAL = "ptxas: <script>alert(1)</script> | [x](javascript:y) \" ) ' \\"
HOSTILE_SOURCE = "```\n</code></pre><script>alert(2)</script>\n{{ x }} {% raw %}\n````\n~~~\n    ```\nint k;\n"
HOSTILE_PTX = "`mma` | <b>x</b> [a](javascript:p)"


def _hostile(data: Any) -> None:
    first, second = data["features"][0], data["features"][1]
    first["label"], first["source"], first["ptx"] = HOSTILE_LABEL, HOSTILE_SOURCE, HOSTILE_PTX
    assert data["values"]["sm_75"][second["id"]] != "compiled"
    data["values"]["sm_75"][second["id"]] = HOSTILE_REFUSAL
    data["provenance"]["compiler"] = "<script>alert(3)</script> | [c](javascript:c)"


def test_hostile_strings_from_the_file_stay_text(corpus: Corpus, tmp_path: Path) -> None:
    data = json.loads(FILE.read_text(encoding="utf-8"))
    _hostile(data)
    md = _hostile_page(corpus, tmp_path, data)
    outside_code = md.split('??? note "The kernel of each feature"', 1)[0]
    assert "<script>" not in outside_code and "<img" not in outside_code and "<b>" not in outside_code
    assert "alert(1)" in outside_code and "alert(3)" in outside_code and "alert(2)" in md
    rows = _rows(md)
    assert len(rows) == len(data["features"]) + 1 and {len(r) for r in rows} == {len(rows[0])}
    # No link to javascript: each bracket and parenthesis a link needs is escaped, or an entity in a title.
    assert '"says &quot;hi&quot;&#41; \\]&#40;javascript:x&#41; \\| \\[y\\]&#40;javascript:z &quot;t&quot;&#41;' in md
    assert "`, says &quot;hi&quot;) \\](javascript:x) \\| \\[y\\](javascript:z" in md
    assert "\\| \\[x\\]&#40;javascript:y&#41;" in md and "\\| \\[c\\](javascript:c)" in md
    # The kernel: one fence longer than any run of backticks in it, closed once after its last line.
    fence = "    `````cuda\n"
    assert md.count(fence) == 1
    block = md.split(fence, 1)[1].split("\n    `````\n", 1)[0]
    assert block.endswith("    int k;") and "{{ x }} {% raw %}" in block


def test_hostile_strings_from_the_file_stay_text_in_the_html(corpus: Corpus, tmp_path: Path) -> None:
    data = json.loads(FILE.read_text(encoding="utf-8"))
    _hostile(data)
    page = _html(_hostile_page(corpus, tmp_path, data))
    assert "<script" not in page and "<img" not in page and "onerror" not in page.replace("onerror=alert", "")
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs and not [h for h in hrefs if "javascript" in h.lower()]
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "<script>alert(1)</script> | [x](javascript:y)" in text  # the refusal, as the compiler said it
    assert "</code></pre><script>alert(2)</script>" in text and "{{ x }} {% raw %}" in text  # the kernel
    assert HOSTILE_PTX in text
    first_table = page.split("<table>", 1)[1].split("</table>", 1)[0]
    assert first_table.count("<tr>") == len(data["features"]) + 1
    body = first_table.split("</tr>")[1:-1]
    columns = len(re.findall(r"<th[\s>]", first_table.split("</tr>")[0]))
    assert columns == len(rows := _rows(_page(corpus))[0]) and {len(re.findall(r"<td[\s>]", r)) for r in body} == {
        len(rows)
    }
    assert f'title="{html.escape(HOSTILE_LABEL.replace("  ", " "))}"'.replace("&#x27;", "'") in page


def test_hostile_provenance_of_a_card_that_ran_the_experiment_stays_text(corpus: Corpus) -> None:
    """The caption's "ran on" names each card's GPU and compute capability from its provenance,
    which a contributed file writes: they are shown as text, and a compute capability that is no
    column counts towards no cell."""
    from cudagloss.model.measurement import Measurement, Result
    from cudagloss.model.measurements import NodeRun

    record = corpus.measurements.get(SLUG) if corpus.measurements else None
    assert record is not None and record.measured
    hostile = {
        "compute_capability": "9.0 <script>alert(4)</script>",
        "gpu_name": "<img src=x onerror=alert(5)> | [g](javascript:g)",
    }
    run = NodeRun("evil", Measurement(SLUG, "", "", "ok", hostile, [], [Result("wgmma_on_this_gpu", "ran")]))
    was = list(record.runs)
    record.runs.append(run)
    try:
        md = _page(corpus)
    finally:
        record.runs[:] = was
    caption = md.split('"Ran on N" counts', 1)[1].split("\n\n", 1)[0]
    assert "<script>" not in caption and "<img" not in caption and "alert(4)" in caption and "alert(5)" in caption
    assert "\\[g\\](javascript:g)" in caption and 'href="javascript' not in _html(md)  # escaped: no link
    wgmma = next(r for r in _counted_rows(md)[1:] if "`wgmma`" in r[0])
    head = _counted_rows(md)[0]
    found = RAN.search(wgmma[head.index("9.0")])
    assert found and int(found["n"]) == _ran_in_files()[("wgmma", "9.0")]
