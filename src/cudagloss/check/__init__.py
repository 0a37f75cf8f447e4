"""The check stage: rules across fields and files (validate.py), field limits and dates
(fields.py), names and look-alikes (names.py), author Markdown and its two directives,
measured() and cite() (authortext.py: parsed, never evaluated)."""
