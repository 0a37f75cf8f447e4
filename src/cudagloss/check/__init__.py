"""The check stage: rules across fields and files (validate.py), field limits and dates
(fields.py), names and look-alikes (names.py), author Markdown and where its directives may
stand (markdown_fields.py, markdown_rules.py; the directives themselves are the table of
cudagloss.model.directives: parsed, never evaluated)."""
