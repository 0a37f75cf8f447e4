"""JSON Schema for term files, generated from the model so the two cannot drift apart.

Editors with the YAML language server validate term files against the committed
schema/term.schema.json (each term file's first line points at it); a test regenerates
it and compares.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import types
import typing
from typing import Any, Literal, Union

from cudagloss.model.api import GlossaryApi
from cudagloss.model.term import SectionsFile, Term

SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"
_SCALARS: dict[Any, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}
"""JSON's scalar types (the API's values are numbers, yes/no and text; terms hold only text)."""


def _type_schema(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint):
        name = hint.__name__  # type: ignore[union-attr]
        if name not in defs:
            defs[name] = {}  # reserve first, for recursive models
            defs[name] = _object_schema(hint, defs)
        return {"$ref": f"#/$defs/{name}"}
    if origin is list:
        return {"type": "array", "items": _type_schema(typing.get_args(hint)[0], defs)}
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        if set(options) == {dt.date, Literal["pending"]}:
            return {"anyOf": [{"type": "string", "format": "date"}, {"const": "pending"}]}
        rest = [o for o in options if o is not type(None)]
        schemas = [_type_schema(o, defs) for o in rest]
        if len(rest) < len(options):
            schemas.append({"type": "null"})
        return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    if origin is Literal:
        return {"enum": list(typing.get_args(hint))}
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if hint is dt.date:
        return {"type": "string", "format": "date"}
    raise TypeError(f"no JSON Schema for {hint!r}")


def _bounds(prop: dict[str, Any], meta: dict[str, Any]) -> None:
    """The model's bounds (max_length, max_items) as JSON Schema keywords, so an editor
    flags a value that is too long as the checker would."""
    if prop.get("type") == "array":
        if "max_items" in meta:
            prop["maxItems"] = meta["max_items"]
        if "max_length" in meta and prop["items"].get("type") == "string":
            prop["items"] = {**prop["items"], "maxLength": meta["max_length"]}
    elif prop.get("type") == "string" and "max_length" in meta:
        prop["maxLength"] = meta["max_length"]
    elif prop.get("type") == "integer":
        prop.update({k: meta[m] for m, k in (("minimum", "minimum"), ("maximum", "maximum")) if m in meta})


def _object_schema(cls: Any, defs: dict[str, Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        prop = _type_schema(hints[f.name], defs)
        meta = dict(f.metadata)
        prop = {"description": meta.pop("doc", ""), **prop}
        # An optional field is anyOf [its type, null]: its bounds belong on the typed branch.
        for branch in prop.get("anyOf", [prop]):
            for key in ("pattern", "format"):
                if key in meta and branch.get("type") == "string":
                    branch[key] = meta[key]
            _bounds(branch, meta)
        if f.default is not dataclasses.MISSING and f.default is not None:
            prop["default"] = f.default
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
        properties[f.name] = prop
    schema: dict[str, Any] = {
        "type": "object",
        "description": (cls.__doc__ or "").strip(),
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def json_schema(model: Any = Term, title: str = "CUDA glossary term") -> dict[str, Any]:
    defs: dict[str, Any] = {}
    top = _object_schema(model, defs)
    return {"$schema": SCHEMA_DRAFT, "title": title, **top, "$defs": dict(sorted(defs.items()))}


def schema_text(model: Any = Term, title: str = "CUDA glossary term") -> str:
    return json.dumps(json_schema(model, title), indent=2, ensure_ascii=False) + "\n"


SCHEMAS = {
    "term.schema.json": (Term, "CUDA glossary term"),
    "sections.schema.json": (SectionsFile, "CUDA glossary sections"),
    "glossary.schema.json": (GlossaryApi, "CUDA glossary API (glossary.json at the site's root)"),
}
