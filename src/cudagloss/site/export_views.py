"""Typed views of the exports (llms-full.txt, llms.txt): what their templates may print.

The page views are in views.py; these are apart as only the Exporter (site/export.py) uses them."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup


@dataclass(frozen=True, slots=True)
class Glossary:
    site_name: str
    site_href: Markup | None
    count: int
    terms: tuple[Markup, ...]
    """Each term already rendered by export_term.md.j2, its links rewritten for the one file."""


@dataclass(frozen=True, slots=True)
class LlmsTerm:
    name: str
    href: Markup
    definition: str


@dataclass(frozen=True, slots=True)
class LlmsSection:
    title: str
    description: str
    href: Markup
    terms: tuple[LlmsTerm, ...]


@dataclass(frozen=True, slots=True)
class LlmsExperiment:
    id: str
    href: Markup
    purpose: str


@dataclass(frozen=True, slots=True)
class LlmsTxt:
    site_name: str
    count: int
    glossary_href: Markup
    sections: tuple[LlmsSection, ...]
    experiments: tuple[LlmsExperiment, ...]
