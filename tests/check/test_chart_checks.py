"""An author's mistakes in a term's charts are reported by `make check`'s checker at the field at
fault, as path:line:col: message with a hint, all at once; a correct chart passes."""

from __future__ import annotations

from pathlib import Path

from chartdata import H200, node_file, write_fleet
from cudagloss.errors import GlossaryError
from cudagloss.load.corpus import load_corpus

HEAD = """\
# yaml-language-server: $schema=../schema/term.schema.json
name: Sweep
title: What is a sweep?
definition: A fixture.
section: widgets
measurements:
  - experiment: sweep
"""
SECTIONS = "sections:\n  - slug: widgets\n    title: Widgets\n"


def _check(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "terms").mkdir()
    (tmp_path / "terms" / "_sections.yaml").write_text(SECTIONS, encoding="utf-8")
    (tmp_path / "terms" / "sweep.yaml").write_text(HEAD + text, encoding="utf-8")
    record = node_file("h200-a", H200)
    record["results"].append({"name": "state", "value": "warm", "unit": "", "description": "d", "samples": []})
    record["results"].append({"name": "rate_2mib", "value": 3.0, "unit": "GB/s", "description": "d", "samples": []})
    measurements = write_fleet(tmp_path / "measurements", [record])
    try:
        load_corpus(tmp_path / "terms", tmp_path, measurements=measurements, cache=False)
    except GlossaryError as exc:
        return [d.format() for d in exc.diagnostics]
    return []


GOOD = """\
body: |
  The curve:

  {{ chart("latency") }}
charts:
  - id: latency
    experiment: sweep
    title: Cycles per load against footprint
    x: footprint
    y: latency
    series:
      - results: cycles_{size}
    lines:
      - result: l2_size
        label: L2 size
"""


def test_a_correct_chart_passes(tmp_path: Path) -> None:
    assert _check(tmp_path, GOOD) == []


BROKEN = """\
body: |
  {{ chart("latncy") }} and {{ chart("b") }} {{ chart("c") }} {{ chart("d") }}
charts:
  - id: latency
    experiment: sweep
    title: Latency reaches 960 cycles
    x: footprint
    y: latency
    series:
      - results: cycles_8kib
  - id: b
    experiment: sweep
    title: B
    x: x
    y: y
    series:
      - results: cycle_{size}
      - results: ns_per_element_{count}_paths
  - id: c
    experiment: sweep
    title: C
    x: x
    y: y
    series:
      - results: cycles_{size}
        label: cycles
      - results: rate_{size}
        label: rate
    lines:
      - result: state
        label: s
  - id: d
    experiment: sweep
    title: D
    x: x
    y: y
    series:
      - results: cycles_{size}
    lines:
      - result: ns_per_element_1_paths
        label: one path
  - id: b
    experiment: other
    title: E
    x: x
    y: y
    series:
      - results: cycles_{size}
"""


def test_each_mistake_is_reported_at_its_field_with_a_hint(tmp_path: Path) -> None:
    found = _check(tmp_path, BROKEN)
    said = "\n".join(found)
    expected = [
        ":9:3: body: chart('latncy'): the term has no chart with id 'latncy' (did you mean 'latency'?)",
        ":11:5: charts[0]: the body never shows chart 'latency'",
        ":13:12: charts[0].title: '960 cycles' is a number about a GPU typed by hand",
        ":17:18: charts[0].series[0].results: 'cycles_8kib' has no {size}, {count} or {name} where the x value is",
        ":24:9: charts[1].series[0]: needs a label",
        ":24:18: charts[1].series[0].results: 'cycle_{size}' fits no result of 'sweep' (did you mean 'cycles_8kib'?)",
        ":25:9: charts[1].series[1]: needs a label",
        ":32:7: charts[2].series: its results are in different units (GB/s, cycles)",
        ":47:17: charts[3].lines[0].result: 'ns_per_element_1_paths' is in ns: a reference line is in the y axis's "
        "unit (cycles), or a size on a size axis",
        ":49:9: charts[4].id: 'b' is also the id of charts[1]",
        ":50:17: charts[4].experiment: chart('b'): the term does not cite experiment 'other'",
    ]
    missing = [e for e in expected if e not in said]
    assert missing == [], said
    assert all("\n    hint: " in d and d.split(":")[0].endswith("sweep.yaml") for d in found), found
    assert len(found) == len(expected), said
