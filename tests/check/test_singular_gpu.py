"""Wording that speaks of one GPU ('our H200') on a page whose values more than one node
measured: a warning at the phrase's place, with the wording to use instead; generic prose
about GPUs passes, and so does the same wording where one node measured everything."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from cudagloss.commands.main import main
from cudagloss.errors import Diagnostic
from cudagloss.load.corpus import load_corpus
from cudagloss.load.measurements import load_measurements
from cudagloss.model.measurements import MeasurementSet

HEAD = "# yaml-language-server: $schema=../schema/term.schema.json\n"
SECTIONS = "sections:\n  - slug: basics\n    title: Basics\n"
CITES = "measurements:\n  - experiment: warp-size\n"
HINT = (
    "2 cards measured the values this page cites; write 'on the H200s we measured' or 'on each H200', "
    "or name no GPU (the Measured section names each card)"
)


def term(body: str, extra: str = CITES, definition: str = "A term used by these tests.") -> str:
    """A term file whose body starts on line 7, each line indented by two spaces."""
    lines = "".join(f"  {line}\n" if line else "\n" for line in body.split("\n"))
    return f"{HEAD}name: Typed\ntitle: What is it?\ndefinition: {definition}\nsection: basics\nbody: |\n{lines}{extra}"


def measured_on(root: Path, *nodes: str) -> Path:
    """root/measurements: the fixture's warp-size experiment, measured on these nodes, each an H200 card of its own."""
    source = json.loads((FIXTURES / "good-measurements" / "warp-size" / "fixture-a.json").read_text(encoding="utf-8"))
    folder = root / "measurements" / "warp-size"
    folder.mkdir(parents=True)
    for node in nodes:
        card = "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_URL, node))  # a node is its own card
        data = {
            **source,
            "provenance": {**source["provenance"], "node": node, "gpu_name": "NVIDIA H200", "gpu_uuid": card},
        }
        (folder / f"{node}.json").write_text(json.dumps(data), encoding="utf-8")
    return root / "measurements"


def warnings(root: Path, text: str, measurements: MeasurementSet) -> list[Diagnostic]:
    folder = root / "terms"
    folder.mkdir(exist_ok=True)
    (folder / "_sections.yaml").write_text(SECTIONS, encoding="utf-8")
    (folder / "a.yaml").write_text(text, encoding="utf-8")
    return load_corpus(folder, root, measurements=measurements).warnings


def shown(found: list[Diagnostic]) -> list[str]:
    return [f"{d.path}:{d.line}:{d.col}: {d.message}" for d in found]


BODY = """Our H200 reports {{ measured("warp-size", "warp_size") }}.
The GPU schedules warps; rebuild for the GPU you have, as that GPU needs.
On the H200, a query took {{ measured("warp-size", "query_median") }}.
On the H200 a warp is a group of threads. The H200 nodes we measured agree.
Our H200s and our GPU nodes are plural; `our H200` is code.
The card we measured ran it on this node's CPU, and on our own GPU node.
Each ran on the GPU named under
Measured below."""


def test_each_phrase_about_one_gpu_is_a_warning_at_its_place(tmp_path: Path) -> None:
    measurements = load_measurements(measured_on(tmp_path, "h200-lent", "h200-second"), tmp_path)[0]
    extra = CITES + "    note: What this GPU reports.\nclaims:\n  - says: On the H200 nothing holds\n"
    extra += "    holds: warp-size.warp_size == 32\n"
    found = warnings(tmp_path, term(BODY, extra, definition="Measured on our GPU."), measurements)
    # a field on one line is placed at its start (cudagloss.check.markdown_fields.field_position)
    assert shown(found) == [
        "terms/a.yaml:4:13: definition: 'our GPU' speaks of one GPU, but 2 cards measured this page's values",
        "terms/a.yaml:7:3: body: 'Our H200' speaks of one GPU, but 2 cards measured this page's values",
        "terms/a.yaml:9:3: body: 'On the H200' speaks of one GPU, but 2 cards measured this page's values",
        "terms/a.yaml:12:3: body: 'The card we measured' speaks of one GPU, but 2 cards measured this page's values",
        "terms/a.yaml:12:34: body: 'this node' speaks of one GPU, but 2 cards measured this page's values",
        "terms/a.yaml:12:58: body: 'our own GPU node' speaks of one GPU, but 2 cards measured this page's values",
        "terms/a.yaml:13:15: body: 'the GPU named under Measured' speaks of one GPU, but 2 cards measured "
        "this page's values",
        "terms/a.yaml:17:11: measurements[0].note: 'this GPU' speaks of one GPU, but 2 cards measured "
        "this page's values",
    ]
    assert all(d.warning and d.hint == HINT for d in found)


def test_claims_are_read_too(tmp_path: Path) -> None:
    measurements = load_measurements(measured_on(tmp_path, "h200-lent", "h200-second"), tmp_path)[0]
    extra = CITES + "claims:\n  - says: Our H200 reports a warp size\n    holds: warp-size.warp_size == 32\n"
    found = warnings(tmp_path, term("Plain.", extra), measurements)
    assert shown(found) == [
        "terms/a.yaml:11:11: claims[0].says: 'Our H200' speaks of one GPU, but 2 cards measured this page's values"
    ]


def test_one_node_may_be_spoken_of_as_one_gpu(tmp_path: Path) -> None:
    measurements = load_measurements(measured_on(tmp_path, "h200-lent"), tmp_path)[0]
    assert warnings(tmp_path, term(BODY, definition="Measured on our GPU."), measurements) == []


def test_a_term_that_cites_no_experiment_is_not_warned(tmp_path: Path) -> None:
    measurements = load_measurements(measured_on(tmp_path, "h200-lent", "h200-second"), tmp_path)[0]
    assert warnings(tmp_path, term("Our GPU is fast.", extra=""), measurements) == []


@pytest.mark.parametrize(("strict", "code"), [(False, 0), (True, 1)])
def test_check_prints_the_warning_and_fails_only_when_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, strict: bool, code: int
) -> None:
    measured_on(tmp_path, "h200-lent", "h200-second")
    (tmp_path / "terms").mkdir()
    (tmp_path / "terms" / "_sections.yaml").write_text(SECTIONS, encoding="utf-8")
    (tmp_path / "terms" / "a.yaml").write_text(term("Our H200 is an H200."), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache", *(["--strict"] if strict else []), "terms"]) == code
    err = capsys.readouterr().err
    assert "terms/a.yaml:7:3: warning: body: 'Our H200' speaks of one GPU" in err
    assert f"hint: {HINT}" in err


def test_the_repository_speaks_of_its_nodes_as_many() -> None:
    """terms/ cites experiments that several H200 cards measured: no page says 'our H200'."""
    measurements = load_measurements(ROOT / "measurements", ROOT)[0]
    found = load_corpus(ROOT / "terms", ROOT, measurements=measurements, cache=False).warnings
    assert [d.format() for d in found if "speaks of one GPU" in d.message] == []
