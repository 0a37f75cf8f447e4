"""The committed JSON Schemas are exactly what the model generates."""

from __future__ import annotations

import dataclasses
import json

from conftest import ROOT
from cudagloss.model.schema import SCHEMAS, json_schema, schema_text
from cudagloss.model.term import Term


def test_committed_schemas_match_the_model() -> None:
    for name, (model, title) in SCHEMAS.items():
        committed = (ROOT / "schema" / name).read_text(encoding="utf-8")
        assert committed == schema_text(model, title), f"schema/{name} is stale: run 'make schema'"


def test_every_field_is_documented_and_in_the_schema() -> None:
    schema = json_schema(Term)
    fields = [f.name for f in dataclasses.fields(Term)]
    assert list(schema["properties"]) == fields
    assert all(schema["properties"][f]["description"] for f in fields)
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["name", "title", "definition", "section", "body"]
    for name, sub in schema["$defs"].items():
        assert all(p["description"] for p in sub["properties"].values()), name


def test_schema_is_valid_json_with_dates_as_date_or_pending() -> None:
    schema = json.loads(schema_text())
    written_on = schema["$defs"]["Byline"]["properties"]["written_on"]
    assert written_on["anyOf"] == [{"type": "string", "format": "date"}, {"const": "pending"}]
    assert written_on["default"] == "pending"


def test_an_optional_field_keeps_its_pattern_and_length_on_its_typed_branch() -> None:
    """An editor flags a bad optional value as `make check` would: the bounds of `str | None`
    sit on the string branch of its anyOf, not dropped."""
    source_id = json_schema(Term)["$defs"]["Source"]["properties"]["id"]
    text, null = source_id["anyOf"]
    assert null == {"type": "null"}
    assert text["type"] == "string" and text["pattern"] == "^[a-z0-9]+(-[a-z0-9]+)*$" and text["maxLength"] > 0


def test_every_term_file_starts_with_the_modeline() -> None:
    for path in sorted((ROOT / "terms").glob("*.yaml")):
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        expected = "sections" if path.name == "_sections.yaml" else "term"
        assert first == f"# yaml-language-server: $schema=../schema/{expected}.schema.json", path.name
