"""The adapter between MkDocs and the site stage; MkDocs loads it through site_hooks/glossary.py.

    config.py   the options under `extra: glossary:` in mkdocs.yml, typed and validated
    adapter.py  one GlossaryAdapter per configuration: pages in memory, sanitised HTML, exports
    compat.py   the workarounds that reach into MkDocs, Material and watchdog internals

Nothing else in the package imports this one: it is the only part that needs MkDocs.
"""
