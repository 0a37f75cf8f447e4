"""The nouns every stage shares: a term, the corpus, a measurement file, the measurements
of a glossary, positions in a file, and every path and URL. Nothing here imports Jinja2,
MkDocs or PyYAML: the verifier imports it on a GPU node."""
