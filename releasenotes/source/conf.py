"""Sphinx configuration of the release notes (reno).

Build with ``sphinx-build -b html releasenotes/source
releasenotes/build/html`` from a clone with its git history.
"""

project = 'scheduler release notes'
extensions = ['reno.sphinxext']
html_theme = 'alabaster'
