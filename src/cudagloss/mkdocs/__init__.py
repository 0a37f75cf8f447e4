"""The adapter between MkDocs and the site stage; MkDocs loads it through site_hooks/glossary.py.

    adapter.py  one GlossaryAdapter per configuration: pages in memory, sanitised HTML, exports
    compat.py   the workarounds that reach into MkDocs, Material and watchdog internals

The options under `extra: glossary:` are the project's (cudagloss.load.project reads and types
them for every verb). Nothing else in the package imports this one: it is the only part that needs MkDocs.
"""
