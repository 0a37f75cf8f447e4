"""The load stage: term YAML and measurement JSON read into the model with the position of
every value, files outside the repository or not plain files refused (terms.py, measurements.py);
load_glossary (glossary.py) loads everything a site needs and runs the check stage on it."""
