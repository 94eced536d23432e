"""Sphinx configuration of the scheduler documentation.

Build with ``sphinx-build -W -b html doc/source doc/build/html`` (``tox -e
docs``). The configuration reference is generated from the options
themselves by oslo.config's ``show-options`` directive.
"""

project = 'scheduler'
copyright = 'the scheduler authors, Apache License 2.0'
extensions = ['oslo_config.sphinxext']
exclude_patterns = ['_build']
html_theme = 'alabaster'
# the option help texts are plain text, not always valid reST
suppress_warnings = []
