"""The site stage: the renderer and its Jinja environment, the escaping and sanitising
boundary (escape.py), cited values, auto-links, exports, and the caches that let serve
re-render only what changed. Nothing here imports MkDocs; the adapter does."""
